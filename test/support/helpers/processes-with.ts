import { readdirSync, readFileSync } from "node:fs";

/**
 * The pids, as this machine numbers them, of the live processes whose
 * command line (or, with `in: "environ"`, environment) holds `token`: found
 * through the host's `/proc`, so a process inside a sandbox's PID namespace
 * (whose own pid means nothing here) is found too. A zombie has neither and
 * is not counted.
 */
export function processesWith(token: string, { in: part = "cmdline" }: { in?: "cmdline" | "environ" } = {}): number[] {
  return readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) return [];
    try {
      return readFileSync(`/proc/${entry}/${part}`, "utf8").includes(token) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}
