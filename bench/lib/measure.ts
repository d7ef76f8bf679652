/** Timing helpers for the benchmark: wall-clock samples, percentiles, bounded concurrency. */

export interface Stats {
  count: number;
  mean: number;
  p50: number;
  p95: number;
  /** Completed operations per second of wall-clock time. */
  perSecond: number;
}

/** Runs `fn(i)` for i in [0, total) with at most `concurrency` in flight; returns each call's duration and the wall time. */
export async function timeMany(
  total: number,
  concurrency: number,
  fn: (i: number, worker: number) => Promise<void>,
): Promise<Stats> {
  const durations: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async (w: number) => {
    for (let i = next++; i < total; i = next++) {
      const t0 = performance.now();
      await fn(i, w);
      durations.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, (_, w) => worker(w)));
  return summarize(durations, performance.now() - started);
}

/** The q-quantile (0…1) of samples sorted ascending; NaN when there are none. */
export function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export function summarize(durations: number[], wallMs: number): Stats {
  const sorted = [...durations].sort((a, b) => a - b);
  const at = (q: number) => percentile(sorted, q);
  const mean = sorted.reduce((s, d) => s + d, 0) / Math.max(1, sorted.length);
  return { count: sorted.length, mean, p50: at(0.5), p95: at(0.95), perSecond: (sorted.length / wallMs) * 1000 };
}

export const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "–");
