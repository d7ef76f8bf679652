import { openAiOnFakeLlm } from "../lib/start-loopd-process.js";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeLlm, type FakeLlm } from "../../test/support/fake-llm/server.js";
import type { LongRunSubject } from "./long-run-subjects.js";
import { writeLongRunFile } from "./long-run-scenario.js";
import { openServerMonitor, type ServerMonitor } from "../lib/server-monitor.js";

export interface LongRunBench {
  llm: FakeLlm;
  workspaceDir: string;
  /** Postgres's own counters (WAL, statements); null on PGlite. */
  monitor: ServerMonitor | null;
  /** What a loopd process of this bench is started with (OpenAI provider on the fake). */
  env: Record<string, string>;
  /** Stopped by `close`. */
  subjects: LongRunSubject[];
  close(): Promise<void>;
}

/** What floor and trace share: the fake LLM, a workspace with the file every step reads, the server's monitor, loopd's environment. */
export async function openLongRunBench({
  serverUrl,
  stepCounts,
  logLevel,
}: {
  serverUrl: string | undefined;
  stepCounts: number[];
  logLevel: string;
}): Promise<LongRunBench> {
  const llm = await startFakeLlm();
  const workspaceDir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-ws-"));
  writeLongRunFile(workspaceDir);
  const monitor = serverUrl ? await openServerMonitor(serverUrl) : null;
  const subjects: LongRunSubject[] = [];
  return {
    llm,
    workspaceDir,
    monitor,
    subjects,
    env: {
      ...openAiOnFakeLlm(llm.url),
      LOG_LEVEL: logLevel,
      WORKSPACE_DIR: workspaceDir,
      // One step of room past the last: the last of max_steps would be a grace call.
      MAX_STEPS_LIMIT: String(Math.max(...stepCounts) + 2),
    },
    async close() {
      for (const subject of subjects) await subject.stop();
      await monitor?.close();
      await llm.close();
      rmSync(workspaceDir, { recursive: true, force: true });
    },
  };
}
