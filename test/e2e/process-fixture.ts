import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { createProcessDatabase } from "./process-database.js";

export interface ProcessFixture {
  llm: FakeLlm;
  /** For `spawnLoopd`: the database, both providers pointed at the fake, short leases, a workspace of its own. */
  env: Record<string, string>;
  workspaceDir: string;
  /** Stops the fake, drops the database, removes the workspace (kill the processes first). */
  close(): Promise<void>;
}

/** What a test of loopd as a real process starts with: a fake model server, a database and a workspace of its own. */
export async function openProcessFixture(name: string, extraEnv: Record<string, string> = {}): Promise<ProcessFixture> {
  const llm = await startFakeLlm();
  const workspaceDir = mkdtempSync(path.join(tmpdir(), `loopd-${name}-ws-`));
  const database = await createProcessDatabase(`loopd-${name}-db-`);
  return {
    llm,
    workspaceDir,
    env: {
      ...database.env,
      ANTHROPIC_BASE_URL: llm.url,
      OPENAI_BASE_URL: `${llm.url}/v1`,
      ANTHROPIC_API_KEY: "test",
      OPENAI_API_KEY: "test",
      RUN_LEASE_MS: "1500",
      WORKSPACE_DIR: workspaceDir,
      LOG_LEVEL: "warn",
      ...extraEnv,
    },
    async close() {
      await llm.close();
      await database.drop();
      rmSync(workspaceDir, { recursive: true, force: true });
    },
  };
}
