import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface LoopdProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * loopd as its own process, so its CPU and event loop are its own, and as
 * production runs it: `node dist/main.js` (the Dockerfile's command and
 * `npm start`), its build brought up to date first. Through tsx, the figures
 * would carry tsx's transpiled sources and source maps: about 90 MB more RSS
 * in streams. `BENCH_LOOPD_FROM=source` runs `src/main.ts` through tsx all the
 * same. Resolves once /healthz answers.
 */
export async function startLoopdProcess({
  env,
  checkout = process.env.BENCH_LOOPD_CHECKOUT ?? repoRoot,
  healthWithinMs = 60_000,
}: {
  env: Record<string, string>;
  /** The loopd checkout to start (its own node_modules); another one measures an older version in the same run. @default `BENCH_LOOPD_CHECKOUT`, else this one */
  checkout?: string;
  /** How long its /healthz has to answer 200 (a start on a machine kept busy on purpose takes longer). @default 60 s */
  healthWithinMs?: number;
}): Promise<LoopdProcess> {
  const fromSource = process.env.BENCH_LOOPD_FROM === "source";
  if (!fromSource) buildOnce(checkout);
  // After the build, which can take minutes: the port is free when loopd takes it.
  const port = await freePort();
  // BENCH_CPU_PROF_DIR: each loopd writes a V8 CPU profile there when it stops (open it in Chrome's DevTools).
  const profile = process.env.BENCH_CPU_PROF_DIR
    ? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_CPU_PROF_DIR]
    : [];
  // BENCH_NODE_FLAGS: Node and V8 flags for each loopd (`--heap-growing-percent=50`: how a GC setting moves streams' RSS).
  const flags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  const entry = fromSource ? ["--import", "tsx", "src/main.ts"] : ["dist/main.js"];
  const child = spawn(process.execPath, [...profile, ...flags, ...entry], {
    cwd: checkout,
    // Hundreds of runs (and streams) at once on the one tenant: the per-tenant caps would refuse them (MAX_STREAMS_PER_TENANT: MAX_STREAMS's default).
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      MAX_ACTIVE_RUNS_PER_TENANT: "0",
      MAX_STREAMS_PER_TENANT: "1000",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child, () => stderr, "loopd", healthWithinMs);
  return {
    url,
    pid: child.pid ?? -1,
    async stop() {
      // Exited already (killed by a signal: exitCode stays null).
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const built = new Set<string>();

/** The checkout's server built if its sources changed since its last build (`npm start` does the same), once per bench run. */
export function buildOnce(checkout: string): void {
  if (built.has(checkout)) return;
  // An older checkout without the script is built whole. Its output (tsc writes its errors there) on the bench's stderr, leaving stdout to the report.
  const build = existsSync(path.join(checkout, "scripts/build-if-stale.mjs"))
    ? ["scripts/build-if-stale.mjs", "--only=server"]
    : ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"];
  execFileSync(process.execPath, build, { cwd: checkout, stdio: ["ignore", process.stderr, "inherit"] });
  built.add(checkout);
}

/** Resolves once `url`/healthz answers 200; throws when the child exits first or after `withinMs`. */
export async function waitForHealth(
  url: string,
  child: ChildProcess,
  stderr: () => string,
  what: string,
  withinMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited with ${child.exitCode ?? child.signalCode}: ${stderr()}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`${what} did not answer /healthz within ${withinMs / 1000} s: ${stderr()}`);
}

/** A port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The env that points a loopd's default provider at the bench's fake LLM server (OpenAI's wire format). */
export const openAiOnFakeLlm = (llmUrl: string) => ({
  LLM_PROVIDER: "openai",
  OPENAI_API_KEY: "bench",
  OPENAI_BASE_URL: `${llmUrl}/v1`,
});
