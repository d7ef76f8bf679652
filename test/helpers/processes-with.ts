import { readdirSync, readFileSync } from "node:fs";

/**
 * The pids, as this machine numbers them, of the live processes whose
 * command line holds `token`: found through the host's `/proc`, so a
 * process inside a sandbox's PID namespace (whose own pid means nothing
 * here) is found too. A zombie has no command line and is not counted.
 */
export function processesWith(token: string): number[] {
  return readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(token) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}
