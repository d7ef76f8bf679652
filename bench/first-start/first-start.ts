/**
 * first-start: a fresh clone's first `npm start` against a restart of the
 * same clone, until /healthz answers 200. The clone is of this checkout's
 * HEAD (committed work only), with this checkout's node_modules linked in,
 * as a newcomer has it after `git clone && npm ci`. Its first start builds
 * the server and the playground (scripts/build-if-stale.mjs) and creates
 * the embedded database in the clone's data/; a restart builds nothing and
 * opens that database. The goal: a first start within 3× a restart.
 */
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, waitForHealth } from "../lib/start-loopd-process.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface StartTiming {
  /** `npm start` spawned → /healthz answered 200, ms. */
  totalMs: number;
  /** What scripts/build-if-stale.mjs printed it took for each build (`built server in 0.9 s`), ms. */
  builds: Record<string, number>;
}

export interface FirstStartRow {
  round: number;
  first: StartTiming;
  restarts: StartTiming[];
}

/** `rounds` fresh clones, each started once fresh and `restarts` times again. */
export async function measureFirstStart({
  rounds,
  restarts,
  progress,
}: {
  rounds: number;
  restarts: number;
  progress: (line: string) => void;
}): Promise<FirstStartRow[]> {
  const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();
  const rows: FirstStartRow[] = [];
  for (let round = 1; round <= rounds; round++) {
    const clone = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-clone-"));
    try {
      execFileSync("git", ["clone", "--quiet", "--shared", "--no-checkout", repoRoot, clone]);
      execFileSync("git", ["checkout", "--quiet", head], { cwd: clone });
      symlinkSync(realpathSync(path.join(repoRoot, "node_modules")), path.join(clone, "node_modules"));
      progress(`first-start: round ${round}, a fresh clone of ${head.slice(0, 7)} started`);
      const first = await timeStart(clone);
      const again: StartTiming[] = [];
      for (let i = 0; i < restarts; i++) again.push(await timeStart(clone));
      rows.push({ round, first, restarts: again });
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  }
  return rows;
}

/** `npm start` in `checkout` as a user runs it, timed to its first /healthz 200, then stopped (SIGTERM to its process group). */
async function timeStart(checkout: string): Promise<StartTiming> {
  const port = await freePort();
  const env: Record<string, string | undefined> = {
    ...process.env,
    HOST: "127.0.0.1",
    PORT: String(port),
    LLM_PROVIDER: "mock",
    LOG_LEVEL: "warn",
  };
  // The clone's own defaults: its data/ and workspace/, the embedded database.
  for (const name of ["DATABASE_URL", "DATA_DIR", "WORKSPACE_DIR", "NODE_ENV"]) delete env[name];
  const t0 = performance.now();
  const child = spawn("npm", ["start"], { cwd: checkout, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let totalMs: number;
  try {
    await waitForHealth(`http://127.0.0.1:${port}`, child, () => stderr, "npm start", 180_000);
    totalMs = performance.now() - t0;
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      process.kill(-child.pid!, "SIGTERM");
      await exited;
    }
  }
  const builds: Record<string, number> = {};
  for (const [, name, seconds] of stdout.matchAll(/^built (\w+) in ([\d.]+) s$/gm))
    builds[name!] = Number(seconds) * 1000;
  return { totalMs, builds };
}
