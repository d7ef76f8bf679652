import { mkdirSync, statSync } from "node:fs";
import path from "node:path";
import { OperatorError } from "../errors.js";

/**
 * `mkdir -p` that always ends. Node's own recursive mkdir loops forever
 * where the kernel answers ENOENT under a parent that exists (`/proc/nope`,
 * on Linux): this makes each missing folder from the top, once. The message
 * names `variable`, for the operator to fix.
 */
export function makeDirectory(dir: string, variable: string): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); !exists(at); at = path.dirname(at)) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const folder of missing) {
    try {
      mkdirSync(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw new OperatorError(`${variable} ${dir} cannot be created: ${reasonOf(err)}`, { cause: err });
    }
  }
  if (!statSync(dir).isDirectory()) throw new OperatorError(`${variable} ${dir} is not a folder`);
}

/** Whether something is at `at`; a path through a file (ENOTDIR) has nothing, as mkdir will say. */
function exists(at: string): boolean {
  try {
    statSync(at);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return false;
    throw err;
  }
}

/** An fs error in words: "permission denied", not "EACCES: permission denied, mkdir '…'". */
export function reasonOf(err: unknown): string {
  const { code, message } = err as NodeJS.ErrnoException;
  const reasons: Record<string, string> = {
    EACCES: "permission denied",
    EPERM: "operation not permitted",
    EROFS: "the file system is read-only",
    ENOENT: "no such file or folder (or one that cannot hold folders)",
    ENOTDIR: "a part of the path is a file, not a folder",
    ENOSPC: "no space left on the device",
  };
  return (code && reasons[code]) ?? message;
}
