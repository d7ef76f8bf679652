import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { emptyFolder, repoRoot, TSX } from "./run-program.js";

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** loopd running as a real child process (`node --import tsx src/main.ts`, or another entry). */
export interface LoopdProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Settles when the process has exited, however it ended. */
  exited: Promise<Exit>;
  /** What it wrote to stdout and stderr so far (the tail), for failure messages. */
  output(): string;
}

const started = new Set<LoopdProcess>();

/**
 * Starts loopd with exactly `env` (plus PATH, HOME and TMPDIR, so nothing
 * from the test's own environment, such as DATABASE_URL, leaks in) on a free
 * port, and resolves once `/healthz` answers 200. Rejects with the process
 * output if it exits or is not ready within `readyTimeoutMs`. The port is
 * free when picked, but another test file may take it before loopd binds
 * it: loopd then says so and exits, and is started again on another.
 * The overload guard is off, as in start-loopd.ts.
 */
export async function spawnLoopd({
  env,
  entry = "src/main.ts",
  // A generous bound, not a measure: tsx compiles the sources at start, slowly on a busy machine.
  readyTimeoutMs = 90_000,
  cwd = emptyFolder,
}: {
  env: Record<string, string>;
  /** The script to run, relative to the repository. @default "src/main.ts" */
  entry?: string;
  readyTimeoutMs?: number;
  /** Its working folder (where it reads `.env`). @default an empty folder */
  cwd?: string;
}): Promise<LoopdProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), { env, entry, readyTimeoutMs, cwd });
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt >= 3) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startOn(port: number, { env, entry, readyTimeoutMs, cwd }: { env: Record<string, string>; entry: string; readyTimeoutMs: number; cwd: string }): Promise<LoopdProcess> {
  const child = spawn(process.execPath, ["--import", TSX, path.join(repoRoot, entry)], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      TMPDIR: process.env.TMPDIR ?? "/tmp",
      // A process just started on a busy machine (tsx compiling, the embedded database
      // opening) lags past the overload guard's second, and its first requests got 503.
      MAX_EVENT_LOOP_DELAY_MS: "0",
      MAX_ACTIVE_RUNS_PER_TENANT: "0",
      DB_ADMISSION_WAIT_MS: "0",
      ...env,
      HOST: "127.0.0.1",
      PORT: String(port),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString("utf8")).slice(-20_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const loopd: LoopdProcess = { url: `http://127.0.0.1:${port}`, pid: child.pid!, child, exited, output: () => out };
  started.add(loopd);
  void exited.then(() => started.delete(loopd));

  const deadline = Date.now() + readyTimeoutMs;
  let exit: Exit | null = null;
  void exited.then((e) => (exit = e));
  while (Date.now() < deadline) {
    if (exit) {
      const why = `loopd exited before it was ready (${JSON.stringify(exit)}):\n${out}`;
      throw /PORT \d+ is already in use/.test(out) ? new PortTaken(why) : new Error(why);
    }
    try {
      const res = await fetch(`${loopd.url}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.status === 200) return loopd;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  await killProcess(loopd);
  throw new Error(`loopd was not ready within ${readyTimeoutMs} ms:\n${out}`);
}

/** SIGKILL (unless it already exited) and wait for the exit. */
export async function killProcess(loopd: LoopdProcess, signal: NodeJS.Signals = "SIGKILL"): Promise<Exit> {
  if (loopd.child.exitCode === null && loopd.child.signalCode === null) loopd.child.kill(signal);
  return loopd.exited;
}

/** Every loopd this module started that is still running: for afterAll, whatever happened. */
export async function killAllLoopd(): Promise<void> {
  await Promise.all([...started].map((loopd) => killProcess(loopd)));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
