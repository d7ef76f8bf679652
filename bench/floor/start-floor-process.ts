import { fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { FloorRequest } from "../lib/floor-loop.js";

export interface FloorCommand {
  conversationIds: string[];
  prompt: string;
  request: FloorRequest;
}

export type FloorReply = { ok: true; calls: number } | { ok: false; error: string };

export interface FloorProcess {
  pid: number;
  /** Runs the conversations one after the other; resolves with the number of model calls made. */
  run(command: FloorCommand): Promise<number>;
  stop(): Promise<void>;
}

const entry = fileURLToPath(new URL("./floor-process.ts", import.meta.url));

/** Starts bench/floor/floor-process.ts (through tsx) and resolves once it has opened its database. */
export async function startFloorProcess({
  llmUrl,
  database,
  workspaceDir,
}: {
  llmUrl: string;
  database: { databaseUrl?: string; dataDir?: string };
  workspaceDir: string;
}): Promise<FloorProcess> {
  const child = fork(entry, [], {
    // BENCH_CPU_PROF_DIR: the floor writes a V8 CPU profile there too, to set loopd's against.
    execArgv: [
      "--import",
      "tsx",
      ...(process.env.BENCH_CPU_PROF_DIR ? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_CPU_PROF_DIR] : []),
    ],
    env: {
      ...process.env,
      FLOOR_LLM_URL: `${llmUrl}/v1`,
      FLOOR_DATABASE_URL: database.databaseUrl ?? "",
      FLOOR_DATA_DIR: database.dataDir ?? "",
      FLOOR_WORKSPACE: workspaceDir,
    },
  });
  // One listener each for the process's life: the replies come one at a time, in order.
  let waiting: ((reply: FloorReply) => void) | null = null;
  const settle = (reply: FloorReply) => {
    const resolve = waiting;
    waiting = null;
    resolve?.(reply);
  };
  child.on("message", settle);
  child.on("exit", () => settle({ ok: false, error: "the floor exited" }));
  const next = async (): Promise<number> => {
    const reply = await new Promise<FloorReply>((resolve) => (waiting = resolve));
    if (!reply.ok) throw new Error(`floor: ${reply.error}`);
    return reply.calls;
  };
  await next();
  return {
    pid: child.pid ?? -1,
    run(command) {
      const replied = next();
      child.send(command);
      return replied;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, "exit");
      child.disconnect();
      await exited;
    },
  };
}
