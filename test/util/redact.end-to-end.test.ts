import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, expect, test } from "vitest";
import { buildApp, createLogger, type Loopd } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createProviders } from "../../src/providers/index.js";
import type { Database } from "../../src/store/db.js";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { createTestDatabase, type TestDatabase } from "../support/helpers/test-database.js";

/*
 * Known fake keys, set the way an operator sets them: runs that succeed and
 * runs whose provider error quotes a key or an Authorization header, with
 * logs at debug. Nothing loopd writes (log lines, trace rows, events, run
 * errors, HTTP answers) holds a key.
 */
const ANTHROPIC_KEY = "fake-anthropic-key-SECRET123-abcdef";
const OPENAI_KEY = "fake-openai-key-SECRET456-ghijkl";
const TOOL_TOKEN = "tok-SECRET789-configured";

let llm: FakeLlm;
let testDb: TestDatabase;
let database: Database;
let loopd: Loopd;
let logText = "";
const answers: string[] = [];

beforeAll(async () => {
  llm = await startFakeLlm();
  testDb = await createTestDatabase();
  database = await testDb.open();
  const config = loadConfig({
    ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    OPENAI_API_KEY: OPENAI_KEY,
    WEATHER_TOOL_TOKEN: TOOL_TOKEN,
    LOG_LEVEL: "debug",
    WORKSPACE_DIR: mkdtempSync(path.join(tmpdir(), "loopd-ws-")),
  });
  const sink = new Writable({
    write(chunk, _enc, done) {
      logText += String(chunk);
      done();
    },
  });
  loopd = await buildApp({
    config,
    database,
    providers: createProviders({
      anthropic: { client: new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: llm.url, maxRetries: 0 }) },
      openai: { client: new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${llm.url}/v1`, maxRetries: 0 }) },
    }),
    logger: createLogger("debug", { pretty: false, destination: sink, secrets: config.secrets }),
  });
});

afterAll(async () => {
  await loopd?.close();
  await database?.close();
  await testDb?.drop();
  await llm?.close();
});

async function call(method: "GET" | "POST", url: string, payload?: unknown, headers: Record<string, string> = {}) {
  const res = await loopd.app.inject({
    method,
    url,
    ...(payload !== undefined && { payload: payload as object }),
    headers,
  });
  answers.push(res.body);
  return res;
}

test("keys never appear in logs, traces, events, run errors or answers, whatever a provider's error quotes", async () => {
  const client = api(loopd.app);
  const anthropic = await client.createConversation({ provider: "anthropic" });
  const openai = await client.createConversation({ provider: "openai" });

  llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, { text: "42" });
  const ok = (
    await call(
      "POST",
      `/conversations/${anthropic.id}/messages`,
      { content: "6*7?" },
      { authorization: `Bearer ${ANTHROPIC_KEY}`, "x-api-key": OPENAI_KEY },
    )
  ).json();
  expect(ok.run.status).toBe("completed");
  // The SDKs did send the keys: there was something to keep out.
  expect(JSON.stringify(llm.requests[0]!.headers)).toContain(ANTHROPIC_KEY);

  // A compatible server that quotes the key it was given, and one that quotes a header.
  llm.script({ status: 401, message: `Incorrect API key provided: ${OPENAI_KEY}. You can find your API key at …` });
  const failed = (await call("POST", `/conversations/${openai.id}/messages`, { content: "Hello?" })).json();
  expect(failed.run).toMatchObject({ status: "failed", error: { code: "provider_error" } });
  expect(failed.run.error.message).toContain("Incorrect API key provided: [redacted]");
  llm.script({ status: 400, message: `bad header authorization: Bearer ${ANTHROPIC_KEY}; and a token ${TOOL_TOKEN}` });
  const failed2 = (await call("POST", `/conversations/${anthropic.id}/messages`, { content: "Again?" })).json();
  expect(failed2.run.status).toBe("failed");

  for (const [conv, run] of [
    [anthropic.id, ok.run.id],
    [openai.id, failed.run.id],
    [anthropic.id, failed2.run.id],
  ]) {
    await call("GET", `/conversations/${conv}/runs/${run}`);
    await call("GET", `/conversations/${conv}/runs/${run}/trace?expand=requests`);
    await call("GET", `/conversations/${conv}/runs/${run}/trace`, undefined, { accept: "application/x-ndjson" });
    await call("GET", `/conversations/${conv}/runs/${run}/events`);
  }
  const trace = JSON.parse(answers.at(-3)!);
  expect(trace.spans.find((s: any) => s.type === "model.call" && s.outcome === "failed").error).toContain("[redacted]");

  const rows = async (table: string) =>
    JSON.stringify(await database.query({ name: "", text: `select * from ${table}`, values: [] }));
  const written = {
    logs: logText,
    run_spans: await rows("run_spans"),
    run_events: await rows("run_events"),
    runs: await rows("runs"),
    messages: await rows("messages"),
    answers: answers.join("\n"),
  };
  expect(written.logs).toContain("model call failed"); // the failure was logged, without the key
  expect(written.run_spans.length).toBeGreaterThan(100);
  for (const [where, text] of Object.entries(written)) {
    for (const secret of [ANTHROPIC_KEY, OPENAI_KEY, TOOL_TOKEN, "SECRET123", "SECRET456", "SECRET789"]) {
      expect(text.includes(secret), `${secret} found in ${where}`).toBe(false);
    }
  }
});
