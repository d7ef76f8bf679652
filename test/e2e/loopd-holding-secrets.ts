import { randomUUID } from "node:crypto";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { loopdClient } from "./loopd-client.js";
import { killAllLoopd, spawnLoopd, type LoopdProcess } from "./loopd-process.js";
import { createProcessDatabase } from "./process-database.js";

/** A command that writes every /proc/*\/environ and cmdline it can read to sweep.txt in its folder. */
export const SWEEP_COMMAND =
  "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do echo \"== $f\"; tr '\\0' '\\n' < \"$f\"; done > sweep.txt 2>/dev/null; echo swept";

export interface LoopdHoldingSecrets {
  llm: FakeLlm;
  loopd: LoopdProcess;
  client: ReturnType<typeof loopdClient>;
  /** Every secret loopd holds in its environment (DATABASE_URL too, on Postgres). */
  secrets(): string[];
  close(): Promise<void>;
}

/**
 * loopd as a real process on the fake LLM (openai) and a database of its
 * own, holding secrets in its environment (a provider key, the admin token,
 * one more, and on Postgres DATABASE_URL), with `env` on top.
 */
export async function startLoopdHoldingSecrets({
  env,
  prefix,
}: {
  env: Record<string, string>;
  prefix: string;
}): Promise<LoopdHoldingSecrets> {
  const held = {
    OPENAI_API_KEY: `sk-test-${randomUUID()}`,
    ADMIN_TOKEN: `admin-${randomUUID()}`,
    LOOPD_TEST_SECRET: `secret-${randomUUID()}`,
  };
  const llm = await startFakeLlm();
  const database = await createProcessDatabase(prefix);
  const loopd = await spawnLoopd({
    env: {
      ...database.env,
      ...held,
      OPENAI_BASE_URL: `${llm.url}/v1`,
      LLM_PROVIDER: "openai",
      LOG_LEVEL: "warn",
      ...env,
    },
  });
  return {
    llm,
    loopd,
    client: loopdClient(() => loopd.url),
    secrets: () => [...Object.values(held), ...(database.env.DATABASE_URL ? [database.env.DATABASE_URL] : [])],
    async close() {
      await killAllLoopd();
      await llm.close();
      await database.drop();
    },
  };
}
