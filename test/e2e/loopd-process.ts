import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { spawnUnreaped } from "../support/helpers/non-reaping-parent.js";
import { createServer } from "node:net";
import { emptyFolder, programArgs } from "./run-program.js";

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** loopd running as a real child process (`node --import tsx src/main.ts`, or another entry). */
export interface LoopdProcess {
  url: string;
  /** loopd's own pid. */
  pid: number;
  /** The test's child: loopd itself, or (`unreaped`) the parent that never waits for it. */
  child: ChildProcess;
  /** Settles when the process has exited, however it ended. */
  exited: Promise<Exit>;
  /** What it wrote to stdout and stderr so far (the tail), for failure messages. */
  output(): string;
  /** Whether it has exited (a zombie counts). */
  ended(): boolean;
}

const started = new Set<LoopdProcess>();
/** The parents that never reap: ended last, which lets their zombies go. */
const unreapedParents = new Set<ChildProcess>();

/**
 * Starts loopd with exactly `env` (plus PATH, HOME and TMPDIR, so nothing
 * from the test's own environment, such as DATABASE_URL, leaks in) on a free
 * port, and resolves once `/healthz` answers 200. Rejects with the process
 * output if it exits or is not ready within `readyTimeoutMs`. The port is
 * free when picked, but another test file may take it before loopd binds
 * it: loopd then says so and exits, and is started again on another.
 */
export async function spawnLoopd({
  env,
  entry = "src/main.ts",
  // A generous bound, not a measure: tsx compiles the sources at start, slowly on a busy machine.
  readyTimeoutMs = 90_000,
  cwd = emptyFolder,
  unreaped = false,
}: {
  env: Record<string, string>;
  /** The script to run, relative to the repository. @default "src/main.ts" */
  entry?: string;
  readyTimeoutMs?: number;
  /** Its working folder (where it reads `.env`). @default an empty folder */
  cwd?: string;
  /** Under a parent that never reaps it (see non-reaping-parent.ts): killed, it stays a zombie. @default false */
  unreaped?: boolean;
}): Promise<LoopdProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), { env, entry, readyTimeoutMs, cwd, unreaped });
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt >= 3) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startOn(
  port: number,
  {
    env,
    entry,
    readyTimeoutMs,
    cwd,
    unreaped,
  }: { env: Record<string, string>; entry: string; readyTimeoutMs: number; cwd: string; unreaped: boolean },
): Promise<LoopdProcess> {
  const args = programArgs(entry);
  const options = {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      TMPDIR: process.env.TMPDIR ?? "/tmp",
      MAX_ACTIVE_RUNS_PER_TENANT: "0",
      DB_ADMISSION_WAIT_MS: "0",
      ...env,
      HOST: "127.0.0.1",
      PORT: String(port),
    },
  };
  const { child, pid, exited } = unreaped
    ? await spawnUnreaped(process.execPath, args, options).then(({ parent, ...rest }) => ({ child: parent, ...rest }))
    : spawnChild(args, options);
  if (unreaped) unreapedParents.add(child);
  let out = "";
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString("utf8")).slice(-20_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  let ended = false;
  void exited.then(() => (ended = true));
  const loopd: LoopdProcess = {
    url: `http://127.0.0.1:${port}`,
    pid,
    child,
    exited,
    output: () => out,
    ended: () => ended,
  };
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
  if (!loopd.ended()) process.kill(loopd.pid, signal);
  return loopd.exited;
}

function spawnChild(
  args: string[],
  options: SpawnOptions,
): { child: ChildProcess; pid: number; exited: Promise<Exit> } {
  const child = spawn(process.execPath, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  return {
    child,
    pid: child.pid!,
    exited: new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal }))),
  };
}

/** Every loopd this module started that is still running: for afterAll, whatever happened. */
export async function killAllLoopd(): Promise<void> {
  await Promise.all([...started].map((loopd) => killProcess(loopd)));
  for (const loopd of unreapedParents) loopd.kill("SIGKILL");
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
