import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { FloorRequest } from "../lib/floor-loop.js";
import { freePort, waitForHealth } from "../lib/start-loopd-process.js";

/** What GET /stats of the stream floor answers, since its start or its last POST /stats/reset. */
export interface FloorStats {
  /** For each write: from asking the pool for a connection (PGlite: the write queue) to holding it, in ms. */
  poolWaitMs: { count: number; sum: number; p50: number; p99: number };
  /** Runs that ended with run.completed. */
  runs: number;
  /** Model calls made (completed runs or not). */
  steps: number;
  /** Runs that ended with run.failed, or answered 500 before their stream began. */
  failures: number;
}

export interface StreamFloor {
  url: string;
  pid: number;
  stats(): Promise<FloorStats>;
  resetStats(): Promise<void>;
  stop(): Promise<void>;
}

const entry = fileURLToPath(new URL("./stream-floor-server.ts", import.meta.url));

/**
 * Starts bench/streams/stream-floor-server.ts as its own process (through tsx), so
 * its CPU and event loop are its own as loopd's are, and resolves once
 * /healthz answers (its store is open).
 */
export async function startStreamFloor({
  llmUrl,
  database,
  request,
  poolSize,
  noDatabase = false,
}: {
  /** The fake's url (`FakeLlm.url`); `/v1` is added unless it is there already. */
  llmUrl: string;
  database: { databaseUrl?: string; dataDir?: string };
  request: FloorRequest;
  /** Postgres only. @default 10, loopd's default */
  poolSize?: number;
  /** Save nothing: the floor's inserts left out (the SDK, HTTP and the model alone). */
  noDatabase?: boolean;
}): Promise<StreamFloor> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    env: {
      ...process.env,
      FLOOR_PORT: String(port),
      FLOOR_LLM_URL: llmUrl.replace(/\/+$/, "").replace(/(?<!\/v1)$/, "/v1"),
      FLOOR_DATABASE_URL: database.databaseUrl ?? "",
      FLOOR_DATA_DIR: database.dataDir ?? "",
      FLOOR_POOL_SIZE: poolSize === undefined ? "" : String(poolSize),
      FLOOR_REQUEST: JSON.stringify(request),
      FLOOR_NO_DATABASE: noDatabase ? "1" : "",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  // Its last words only, should it die: a long-lived process must not grow a string without bound.
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-16_000)));
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child, () => stderr, "the stream floor");
  const call = async (method: "GET" | "POST", path: string): Promise<unknown> => {
    const res = await fetch(`${url}${path}`, { method });
    if (!res.ok) throw new Error(`stream floor: ${method} ${path} answered ${res.status}: ${await res.text()}`);
    return res.json();
  };
  return {
    url,
    pid: child.pid ?? -1,
    stats: async () => (await call("GET", "/stats")) as FloorStats,
    resetStats: async () => void (await call("POST", "/stats/reset")),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      // A floor stuck closing its pool must not hang the bench.
      const stuck = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(stuck);
    },
  };
}
