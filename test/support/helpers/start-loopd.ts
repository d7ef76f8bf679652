import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { Logger } from "pino";
import { buildApp, createLogger, type Loopd } from "../../../src/app.js";
import { loadConfig } from "../../../src/config.js";
import { createProviders } from "../../../src/providers/index.js";
import type { Database } from "../../../src/store/db.js";
import type { Tool } from "../../../src/tools/define-tool.js";
import type { FakeLlm } from "../fake-llm/server.js";

export interface TestLoopd extends Loopd {
  /** The base URL when listening on a real socket. */
  url: string;
  config: ReturnType<typeof loadConfig>;
}

/** loopd wired to the fake LLM server through the real SDKs, on a test database. */
export async function startLoopd({
  database,
  llm,
  env = {},
  tools,
  listen = false,
  instanceId,
  ssePingMs,
  responseSocketIdleMs,
  responseSocketLifeMs,
  pressureSampleMs,
  logger,
}: {
  database: Database;
  llm: FakeLlm;
  env?: Record<string, string>;
  tools?: Tool[];
  listen?: boolean;
  instanceId?: string;
  ssePingMs?: number;
  responseSocketIdleMs?: number;
  responseSocketLifeMs?: number;
  pressureSampleMs?: number;
  logger?: Logger;
}): Promise<TestLoopd> {
  const config = loadConfig({
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    WORKSPACE_DIR: mkdtempSync(path.join(tmpdir(), "loopd-ws-")),
    SHUTDOWN_TIMEOUT_MS: "2000",
    // Test files leave runs paused across many conversations of the one tenant; the cap has its own tests.
    MAX_ACTIVE_RUNS_PER_TENANT: "0",
    // Likewise a long transaction of a busy machine would shed new runs; test/conversations/send-message.admission.test.ts turns it on.
    DB_ADMISSION_WAIT_MS: "0",
    ...env,
  });
  const providers = createProviders({
    anthropic: { client: new Anthropic({ apiKey: "test-anthropic-key", baseURL: llm.url }) },
    openai: { client: new OpenAI({ apiKey: "test-openai-key", baseURL: `${llm.url}/v1` }) },
  });
  const loopd = await buildApp({
    config,
    database,
    providers,
    ...(tools && { tools }),
    ...(instanceId && { instanceId }),
    ...(ssePingMs && { ssePingMs }),
    responseSocket: {
      ...(responseSocketIdleMs && { idleMs: responseSocketIdleMs }),
      ...(responseSocketLifeMs && { lifeMs: responseSocketLifeMs }),
    },
    ...(pressureSampleMs && { pressureSampleMs }),
    logger: logger ?? createLogger(config.server.logLevel),
  });
  let url = "";
  if (listen) {
    await loopd.app.listen({ host: "127.0.0.1", port: 0 });
    const address = loopd.app.server.address();
    if (address && typeof address === "object") url = `http://127.0.0.1:${address.port}`;
  }
  return { ...loopd, url, config };
}
