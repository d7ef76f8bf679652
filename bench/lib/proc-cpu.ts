import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc's utime and stime (`getconf CLK_TCK`: 100 on every Linux in practice). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, all threads, ms) a process has used so far, from
 * /proc/<pid>/stat; null once it has exited. Resolution: one tick, 10 ms.
 */
export function cpuMsOf(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 of the whole line (utime, stime) are the 12th and 13th after the name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** The parent of a process, from /proc/<pid>/stat. */
export function parentPidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** A process's title as `ps` shows it (Postgres backends rewrite theirs: "postgres: … user database host state"); null once it has exited. */
export function titleOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return null;
  }
}

/** The children of a process (needs CONFIG_PROC_CHILDREN, as in every common kernel). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** CPU time (ms, all cores) the whole machine has spent busy so far, from the first line of /proc/stat. */
export function machineBusyMs(): number {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
  const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, t) => sum + (t ?? 0), 0);
  return (busy * 1000) / TICKS_PER_SECOND;
}
