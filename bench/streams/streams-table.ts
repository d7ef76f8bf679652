import type { StreamsRow } from "./concurrent-streams.js";
import { markdownTable } from "../lib/markdown-table.js";

const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "–");

/**
 * streams many streaming runs at once: each row next to the floors' of the
 * same N and database (the one-INSERT floor, and the floor saving nothing):
 * runs/s and first event p99 as ratios to each.
 */
export function streamsTable(rows: Array<StreamsRow & { kind: string }>): string {
  const floorOf = (r: StreamsRow & { kind: string }, subject: "floor" | "no-db floor") =>
    rows.find((f) => f.kind === r.kind && f.concurrency === r.concurrency && f.subject === subject);
  const ratios = (r: StreamsRow, floor: StreamsRow | undefined) =>
    floor && floor !== r
      ? `${fixed(r.runsPerSecond / floor.runsPerSecond, 2)}× · ${fixed(r.ttfeP99 / floor.ttfeP99, 2)}×`
      : "–";
  return markdownTable(
    [
      "db",
      "N",
      "subject",
      "runs",
      "failed",
      "runs/s",
      "÷ floor (runs/s · first event p99)",
      "÷ no-db floor (runs/s · first event p99)",
      "steps/s",
      "first event p50 · p99 ms",
      "last event p50 · p99 ms",
      "CPU ms/run (server + backends)",
      "pool wait ms",
      "RSS MB after each round (rise of the highest later one)",
      "load",
    ],
    rows.map((r) => {
      const failed =
        r.failures === 0
          ? "0"
          : `${r.failures} (${Object.entries(r.failureReasons)
              .map(([why, n]) => `${why} ×${n}`)
              .join(", ")}${r.retryAfter > 0 ? `; ${r.retryAfter} with Retry-After` : ""})`;
      return [
        r.kind,
        String(r.concurrency),
        r.subject,
        String(r.runs),
        failed,
        fixed(r.runsPerSecond, 1),
        ratios(r, floorOf(r, "floor")),
        ratios(r, floorOf(r, "no-db floor")),
        fixed(r.stepsPerSecond, 1),
        `${fixed(r.ttfeP50, 0)} · ${fixed(r.ttfeP99, 0)}`,
        `${fixed(r.ttleP50, 0)} · ${fixed(r.ttleP99, 0)}`,
        Number.isFinite(r.backendsMsPerRun)
          ? `${fixed(r.cpuMsPerRun + r.backendsMsPerRun, 1)} (${fixed(r.cpuMsPerRun, 1)} + ${fixed(r.backendsMsPerRun, 1)})`
          : fixed(r.cpuMsPerRun, 1),
        fixed(r.poolWaitMs, 2),
        rssByRound(r.rssMb),
        fixed(r.load1, 2),
      ];
    }),
  );
}

/** `194 → 195 → 199 (+3%)`: the rounds' RSS, and how far the highest after the first rose above it. */
function rssByRound(mb: number[]): string {
  const [first, ...later] = mb;
  if (first === undefined) return "–";
  const rounds = mb.map((m) => fixed(m, 0)).join(" → ");
  if (later.length === 0) return rounds;
  const rise = Math.max(...later) / first - 1;
  if (!Number.isFinite(rise)) return rounds;
  return `${rounds} (${rise >= 0 ? "+" : "−"}${fixed(Math.abs(rise) * 100, 0)}%)`;
}
