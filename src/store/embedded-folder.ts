import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describeError, findInCauseChain, OperatorError } from "../errors.js";
import { LOCK_FILE } from "./data-dir-lock.js";

/** The PostgreSQL major version PGlite's files are (its PG_VERSION). */
const PGLITE_PG_MAJOR = "17";
/** Where PGlite keeps its files inside DATA_DIR, beside the lock. */
export const PGLITE_FOLDER = "pgdata";

/**
 * Where the embedded database of `dataDir` keeps its files, after checking
 * that the folder is loopd's, or new: `dataDir/pgdata` (a folder of before
 * the lock keeps its files at its top, and is opened where they are).
 * Refused, before anything is written into it: the inside of another
 * loopd folder, a PostgreSQL data folder of another version (not loopd's),
 * a folder holding other files, and, with `mustExist`, a folder with no
 * database (a mistyped DATA_DIR for a command that only reads).
 */
export function embeddedFolderOf(dataDir: string, { mustExist = false }: { mustExist?: boolean } = {}): string {
  const current = path.join(dataDir, PGLITE_FOLDER);
  if (existsSync(path.join(current, "PG_VERSION"))) return current;
  if (path.basename(dataDir) === PGLITE_FOLDER) {
    throw new OperatorError(
      `DATA_DIR ${dataDir} is the inside of loopd's folder ${path.dirname(dataDir)}: set DATA_DIR to that folder`,
    );
  }
  const version = readVersion(dataDir);
  if (version !== null) {
    if (version === PGLITE_PG_MAJOR) return dataDir;
    throw new OperatorError(
      `DATA_DIR ${dataDir} holds a PostgreSQL ${version} data folder, not loopd's embedded database: set DATA_DIR to another folder (or DATABASE_URL to that server's URL, if it is one you run)`,
    );
  }
  if (mustExist)
    throw new OperatorError(
      `there is no embedded database in ${dataDir} (DATA_DIR): is DATA_DIR the folder loopd serves from?`,
    );
  const others = readdirSync(dataDir).filter((name) => !name.startsWith(LOCK_FILE) && name !== PGLITE_FOLDER);
  if (others.length > 0) {
    throw new OperatorError(
      `DATA_DIR ${dataDir} holds other files (${others.slice(0, 3).join(", ")}${others.length > 3 ? ", …" : ""}) and no loopd database: set DATA_DIR to a new or empty folder`,
    );
  }
  return current;
}

function readVersion(dataDir: string): string | null {
  try {
    return readFileSync(path.join(dataDir, "PG_VERSION"), "utf8").trim();
  } catch {
    return null;
  }
}

/**
 * Why the embedded database could not be opened, in words an operator can
 * act on: PGlite's own for damaged files are a WebAssembly trap ("Aborted().
 * Build with -sASSERTIONS …", "unreachable").
 */
export function unopenedMessage(dataDir: string, err: unknown): string {
  const damaged = isDatabaseFault(err) || (err as { name?: unknown }).name === "ExitStatus";
  const what = damaged
    ? "its files are damaged, or were written by another version of PGlite"
    : describeError(err).message;
  return `the embedded database in ${dataDir} could not be opened: ${what}; restore the folder from a backup, or move it away to start empty`;
}

// @types/node declares WebAssembly's types but not the global itself.
const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: ErrorConstructor } }).WebAssembly
  .RuntimeError;

/**
 * A WebAssembly trap inside PGlite (memory access out of bounds, an abort):
 * its memory is corrupt and no query will succeed again in this process.
 */
export function isDatabaseFault(err: unknown): boolean {
  return findInCauseChain(err, (e) => (e instanceof WasmRuntimeError ? true : undefined)) ?? false;
}
