import { markdownTable } from "../lib/markdown-table.js";
import { percentile } from "../lib/measure.js";
import type { ResponsesRound, ResponsesRow } from "./responses-streams.js";

const fixed = (n: number, digits: number) => (Number.isFinite(n) ? n.toFixed(digits) : "–");
const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

const runsPerSecond = (rounds: ResponsesRound[]) =>
  (sum(rounds.map((r) => r.completed)) / sum(rounds.map((r) => r.wallMs))) * 1000;
const ttfeP = (rounds: ResponsesRound[], q: number) => percentile(sorted(rounds.flatMap((r) => r.ttfe)), q);
const ttleP = (rounds: ResponsesRound[], q: number) => percentile(sorted(rounds.flatMap((r) => r.ttle)), q);
const perRun = (rounds: ResponsesRound[], of: (r: ResponsesRound) => number) =>
  sum(rounds.map(of)) / Math.max(1, sum(rounds.map((r) => r.completed)));

/**
 * The ratio over all rounds, then round by round (each against the base's
 * round of the same index), a round marked † when either side had runs
 * refused (sent again after their Retry-After, or failed).
 */
function ratio(rounds: ResponsesRound[], base: ResponsesRound[], of: (rs: ResponsesRound[]) => number): string {
  const each = rounds.map((r, i) => {
    const refused = r.failures.length + r.refusals + base[i]!.failures.length + base[i]!.refusals > 0;
    return `${fixed(of([r]) / of([base[i]!]), 2)}${refused ? "†" : ""}`;
  });
  return `${fixed(of(rounds) / of(base), 2)} (${each.join(", ")})`;
}

/** responses: each subject next to messages of the same database and shape; ratios pooled and round by round. */
export function responsesTable(rows: Array<ResponsesRow & { kind: string }>): string {
  return markdownTable(
    [
      "db",
      "run",
      "subject",
      "runs",
      "refusals sent again",
      "failed",
      "model calls/run",
      "runs/s",
      "÷ messages (by round)",
      "first event p50 · p99 ms",
      "p99 ÷ messages (by round)",
      "last event p50 · p99 ms",
      "loopd CPU ms/run (+ backends)",
      "CPU ÷ messages",
      "client CPU ms/run",
      "machine busy",
    ],
    rows.map((row) => {
      const base = rows.find((b) => b.kind === row.kind && b.shape === row.shape && b.subject === "messages")!;
      const isBase = row === base;
      const { rounds } = row;
      const failures = rounds.flatMap((r) => r.failures);
      const counted = new Map<string, number>();
      for (const f of failures) counted.set(f, (counted.get(f) ?? 0) + 1);
      const cpu = perRun(rounds, (r) => r.loopdCpuMs);
      const backends = perRun(rounds, (r) => r.backendsCpuMs);
      const baseCpu = perRun(
        base.rounds,
        (r) => r.loopdCpuMs + (Number.isFinite(r.backendsCpuMs) ? r.backendsCpuMs : 0),
      );
      const allCpu = cpu + (Number.isFinite(backends) ? backends : 0);
      const busy = rounds.map((r) => r.machineBusy);
      return [
        row.kind,
        row.shape,
        row.subject,
        String(sum(rounds.map((r) => r.runs))),
        String(sum(rounds.map((r) => r.refusals))),
        failures.length === 0
          ? "0"
          : `${failures.length} (${[...counted].map(([why, n]) => `${why} ×${n}`).join(", ")})`,
        fixed(sum(rounds.map((r) => r.modelCalls)) / sum(rounds.map((r) => r.runs)), 2),
        fixed(runsPerSecond(rounds), 1),
        isBase ? "–" : ratio(rounds, base.rounds, runsPerSecond),
        `${fixed(ttfeP(rounds, 0.5), 0)} · ${fixed(ttfeP(rounds, 0.99), 0)}`,
        isBase ? "–" : ratio(rounds, base.rounds, (rs) => ttfeP(rs, 0.99)),
        `${fixed(ttleP(rounds, 0.5), 0)} · ${fixed(ttleP(rounds, 0.99), 0)}`,
        Number.isFinite(backends) ? `${fixed(allCpu, 1)} (${fixed(cpu, 1)} + ${fixed(backends, 1)})` : fixed(cpu, 1),
        isBase ? "–" : `${fixed(allCpu / baseCpu, 2)}`,
        fixed(
          perRun(rounds, (r) => r.clientCpuMs),
          1,
        ),
        `${fixed(Math.min(...busy) * 100, 0)}–${fixed(Math.max(...busy) * 100, 0)}%`,
      ];
    }),
  );
}
