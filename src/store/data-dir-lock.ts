import { randomBytes } from "node:crypto";
import {
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { OperatorError } from "../errors.js";
import { reasonOf } from "../util/make-directory.js";
import { hasExited, here, placeOf, processStartTime } from "./process-place.js";

/** Who holds an embedded database's folder: what its lock file says. */
export interface LockHolder {
  pid: number;
  host: string;
  /** The kernel's boot (Linux): a lock from before a reboot is stale whatever its pid. */
  boot_id?: string;
  /** The pid namespace (Linux): in another one (another container), `pid` means nothing here. */
  pid_ns?: string;
  /** What the process is, for the message a second opener gets ("the loopd server", "npm run replay"). */
  program: string;
  started_at: string;
  /** Where a server holding the folder answers, once it listens: a command that only reads asks it instead. */
  url?: string;
  /** The kernel's start time of `pid` (Linux), which tells a live holder from a new process that got its pid. */
  pid_started?: string;
  /** Tells this holding apart from any other, with the same pid or not. */
  token: string;
}

/** The folder is held by another process (or already open in this one). */
export class DataDirBusyError extends OperatorError {
  override readonly name = "DataDirBusyError";
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | null,
    { takingOver = false }: { takingOver?: boolean } = {},
  ) {
    super(busyMessage(dataDir, holder, takingOver));
  }
}

export interface DataDirLock {
  readonly file: string;
  /** Writes the server's address into the lock, for commands that find the folder held. */
  advertise(url: string): void;
  release(): void;
}

export const LOCK_FILE = "loopd.lock";

/** A holder whose pid cannot be checked from here (another container, another host) keeps its file's time fresh this often; past `STALE_AFTER_MS` without it, the lock is stale. */
const HEARTBEAT_MS = 10_000;
const STALE_AFTER_MS = 30_000;
/** An empty lock file younger than this is being written by its creator (wx, then the write). */
const BEING_WRITTEN_MS = 5_000;

/** Folders this process holds (by lock file), so a second open in the same process is refused too. */
const heldHere = new Set<string>();

/**
 * Takes the embedded database's folder for this process alone: PGlite does
 * not lock it, and two processes on one folder corrupt it for good. The lock
 * is a file holding the holder's pid, created atomically (O_EXCL); it goes
 * when the process closes the database or exits. A lock whose process is
 * gone (a kill -9, a crash, a reboot) is taken over, one taker at a time. A
 * holder whose pid cannot be checked from here — in another container (pid
 * namespace) or on another host sharing the folder — keeps the lock's time
 * fresh instead, and its lock lapses 30 s after it stops (or is paused).
 */
export function lockDataDir(dataDir: string, { program }: { program: string }): DataDirLock {
  // Resolved, so that two names of one folder (relative, a symlink) take the same lock.
  const file = path.join(realpathSync(dataDir), LOCK_FILE);
  const holder: LockHolder = {
    pid: process.pid,
    host: here.host,
    ...optional("boot_id", here.boot_id),
    ...optional("pid_ns", here.pid_ns),
    program,
    started_at: new Date().toISOString(),
    ...optional("pid_started", processStartTime(process.pid)),
    token: randomBytes(12).toString("base64url"),
  };
  if (heldHere.has(file)) throw new DataDirBusyError(dataDir, readHolder(file)?.holder ?? null);
  acquire(file, dataDir, holder);
  heldHere.add(file);

  const ours = () => readHolder(file)?.holder.token === holder.token;
  const heartbeat = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(file, now, now);
    } catch {
      // gone or unreadable: the next opener decides
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const release = () => {
    clearInterval(heartbeat);
    process.off("exit", release);
    if (!heldHere.delete(file)) return;
    try {
      if (ours()) unlinkSync(file);
    } catch {
      // already gone
    }
  };
  process.on("exit", release);
  return {
    file,
    release,
    advertise(url) {
      if (!ours()) return;
      holder.url = url;
      // Replaced whole (rename), so a reader never sees half a file.
      const temp = `${file}.${holder.token}.tmp`;
      writeFileSync(temp, JSON.stringify(holder));
      renameSync(temp, file);
    },
  };
}

/** Whoever holds `dataDir` now, or null when nobody does (no lock, or a stale one). */
export function holderOf(dataDir: string): LockHolder | null {
  let file: string;
  try {
    file = path.join(realpathSync(dataDir), LOCK_FILE);
  } catch {
    return null;
  }
  const seen = readHolder(file);
  return seen && isAlive(seen, file) ? seen.holder : null;
}

function acquire(file: string, dataDir: string, holder: LockHolder): void {
  const create = (at: string) => {
    try {
      writeFileSync(at, JSON.stringify(holder), { flag: "wx" });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw new OperatorError(`DATA_DIR ${dataDir} cannot be written: ${reasonOf(err)}`, { cause: err });
    }
  };
  // One process at a time takes a stale lock over, holding this second file
  // meanwhile: the stale lock it removes is the one it judged stale, never a
  // fresh one that another process created in between.
  const takeover = `${file}.takeover`;
  let stale: LockHolder | null = null;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (create(file)) return;
    const seen = readHolder(file);
    if (!seen) continue;
    if (isAlive(seen, file)) throw new DataDirBusyError(dataDir, seen.holder);
    stale = seen.holder;
    if (!create(takeover)) {
      const taker = readHolder(takeover);
      // A taker that died in those few microseconds leaves its file behind; removed only if it is still that one.
      if (taker && !isAlive(taker, takeover) && readHolder(takeover)?.holder.token === taker.holder.token)
        rmSync(takeover, { force: true });
      sleep(10);
      continue;
    }
    try {
      if (readHolder(file)?.holder.token === seen.holder.token) rmSync(file, { force: true });
    } finally {
      rmSync(takeover, { force: true });
    }
  }
  throw new DataDirBusyError(dataDir, stale, { takingOver: true });
}

/** Start-up code may wait in place: nothing else runs yet. */
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

interface SeenLock {
  holder: LockHolder;
  /** When the file was last written or kept fresh. */
  mtimeMs: number;
}

/** The lock file as it is now; null when there is none. A file that does not parse counts as stale, unless it is being written. */
function readHolder(file: string): SeenLock | null {
  let text: string;
  let mtimeMs: number;
  try {
    text = readFileSync(file, "utf8");
    mtimeMs = statSync(file).mtimeMs;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new OperatorError(`${file} cannot be read (${reasonOf(err)}): if no loopd uses this folder, remove it`, {
      cause: err,
    });
  }
  try {
    const holder = JSON.parse(text) as LockHolder;
    if (typeof holder.pid === "number" && typeof holder.token === "string") return { holder, mtimeMs };
  } catch {
    // below
  }
  const beingWritten = text === "" && Date.now() - mtimeMs < BEING_WRITTEN_MS;
  return {
    holder: {
      pid: 0,
      host: beingWritten ? here.host : "",
      program: "unknown",
      started_at: "",
      token: beingWritten ? "being-written" : "unreadable",
    },
    mtimeMs,
  };
}

function isAlive({ holder, mtimeMs }: SeenLock, file: string): boolean {
  if (holder.token === "being-written") return true;
  if (holder.token === "unreadable") return false;
  switch (placeOf(holder)) {
    case "rebooted":
      return false;
    case "elsewhere":
      return Date.now() - mtimeMs < STALE_AFTER_MS;
    case "same":
      break;
  }
  // Our own pid in a lock we do not hold: a container restarted, and its process got the same pid.
  if (holder.pid === process.pid) return heldHere.has(file);
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // A zombie answers kill(0) until its parent reaps it, which a parent that
  // never waits (a shell's `&`, some supervisors) may never do: it has exited all the same.
  if (hasExited(holder.pid)) return false;
  const started = processStartTime(holder.pid);
  return !(holder.pid_started && started && started !== holder.pid_started);
}

const optional = <K extends string, V>(key: K, value: V | null) =>
  value === null ? {} : ({ [key]: value } as Record<K, V>);

function busyMessage(dataDir: string, holder: LockHolder | null, takingOver: boolean): string {
  const lock = path.join(dataDir, LOCK_FILE);
  if (takingOver) {
    const who = holder ? `process ${holder.pid} (${holder.program}), which is gone` : "a process that is gone";
    return `the embedded database in ${dataDir} is still locked by ${who}: another process is taking its lock over; try again in a moment`;
  }
  if (!holder || holder.token === "being-written")
    return `the embedded database in ${dataDir} is being opened by another process; wait for it, or set DATA_DIR to another folder`;
  if (holder.pid === process.pid && placeOf(holder) === "same")
    return `the embedded database in ${dataDir} is already open in this process`;
  const what = holder.url ? `${holder.program} on ${holder.url}` : holder.program;
  const only =
    "only one process may open it: stop that one first, use its HTTP API, or set DATABASE_URL to share a Postgres server";
  if (placeOf(holder) === "elsewhere") {
    const where =
      holder.host === here.host
        ? `process ${holder.pid} of another container on this machine`
        : `process ${holder.pid} on host ${holder.host}`;
    return `the embedded database in ${dataDir} is in use by ${where} (${what}, since ${holder.started_at}); ${only} (its lock lapses ${STALE_AFTER_MS / 1000} s after that process stops: try again then)`;
  }
  return `the embedded database in ${dataDir} is in use by process ${holder.pid} (${what}, since ${holder.started_at}); ${only} (if that process is not loopd, delete ${lock})`;
}
