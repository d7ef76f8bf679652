import type { StreamsRow } from "./concurrent-streams.js";
import { markdownTable } from "./markdown-table.js";

const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "–");

/** (f) many streaming runs at once. */
export function streamsTable(rows: Array<StreamsRow & { kind: string }>): string {
  return markdownTable(
    ["db", "version", "runs", "failed", "completed runs/s", "first event p50 ms", "first event p99 ms", "load"],
    rows.map((r) => [
      r.kind,
      r.version,
      String(r.runs),
      r.failures === 0 ? "0" : `${r.failures} (${Object.entries(r.failureReasons).map(([why, n]) => `${why} ×${n}`).join(", ")})`,
      fixed(r.runsPerSecond, 1),
      fixed(r.ttfeP50, 1),
      fixed(r.ttfeP99, 1),
      fixed(r.load1, 2),
    ]),
  );
}
