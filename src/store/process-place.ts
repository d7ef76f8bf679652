import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/**
 * Where a lock's holder runs, and whether its process is still the one that
 * wrote the lock, from what Linux tells of processes (/proc); elsewhere each
 * answer is null and the lock file's time decides.
 */

/** Where this process runs: a holder in the same place can be judged by its pid. */
export const here = {
  host: hostname(),
  boot_id: readProc("/proc/sys/kernel/random/boot_id"),
  pid_ns: readLink("/proc/self/ns/pid"),
};

/** Where the holder runs, seen from here: this process's pid namespace (its pid can be checked), this machine before a reboot (it is gone), or elsewhere. */
export function placeOf(holder: {
  host: string;
  boot_id?: string;
  pid_ns?: string;
}): "same" | "rebooted" | "elsewhere" {
  if (holder.host !== here.host) return "elsewhere";
  if (holder.boot_id && here.boot_id && holder.boot_id !== here.boot_id) return "rebooted";
  if (holder.pid_ns && here.pid_ns && holder.pid_ns !== here.pid_ns) return "elsewhere";
  return "same";
}

/** The fields of /proc/<pid>/stat after the command's name (field 3, the state, first); null off Linux or when the process is gone. */
function statFields(pid: number): string[] | null {
  const stat = readProc(`/proc/${pid}/stat`);
  // The name (field 2) is in parentheses and may hold spaces or parentheses itself: the fields start after the last ")".
  return stat === null ? null : stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** State Z (a zombie: exited, not yet reaped) or X (dead). */
export function hasExited(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state === "Z" || state === "X";
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot; null off Linux. */
export function processStartTime(pid: number): string | null {
  return statFields(pid)?.[19] ?? null;
}

function readProc(file: string): string | null {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
}

function readLink(file: string): string | null {
  try {
    return readlinkSync(file);
  } catch {
    return null;
  }
}
