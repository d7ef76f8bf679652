import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { createLoadJudge, type LoadState } from "./load-judge.js";

export interface OverloadMonitor {
  /** `off` when MAX_EVENT_LOOP_DELAY_MS is 0. */
  readonly state: LoadState | "off";
  /** Whether new runs are refused now; nothing else ever is. */
  readonly overloaded: boolean;
  close(): void;
}

export interface OverloadMonitorOptions {
  /** Event-loop lag (ms) that, sustained, makes the process overloaded; 0 turns the guard off. */
  maxDelayMs: number;
  /** How often the lag is sampled. @default 1000 */
  sampleMs?: number;
  /** Where a change of state is said, with the sample that made it. */
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** The histogram's timer: each of its ticks is late by the lag it records. */
const RESOLUTION_MS = 10;
/** A start lagging longer than this is judged all the same (a process started into real overload must shed too). */
const START_GRACE_MS = 30_000;

/**
 * Samples the event loop's lag every `sampleMs`: the mean lag of a fine
 * timer over the interval, or how late the sample itself came when that is
 * more (a loop blocked the whole interval records little). `load-judge.ts`
 * decides what the samples mean.
 */
export function createOverloadMonitor({ maxDelayMs, sampleMs = 1_000, log }: OverloadMonitorOptions): OverloadMonitor {
  if (maxDelayMs === 0) return { state: "off", overloaded: false, close() {} };
  const judge = createLoadJudge({ maxDelayMs, graceSamples: Math.ceil(START_GRACE_MS / sampleMs) });
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let due = performance.now() + sampleMs;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - due);
    due = now + sampleMs;
    const meanLag = histogram.count > 0 ? Math.max(0, histogram.mean / 1e6 - RESOLUTION_MS) : 0;
    histogram.reset();
    const lagMs = Math.max(meanLag, late);
    const before = judge.state;
    if (judge.add(lagMs) === before) return;
    const said = { state: judge.state, lagMs: Math.round(lagMs), maxEventLoopDelayMs: maxDelayMs };
    if (judge.state === "overloaded")
      log.warn(said, "overloaded: new runs are refused (503) until the event loop's lag comes down");
    else
      log.info(
        said,
        before === "overloaded"
          ? "no longer overloaded: new runs are taken again"
          : "started: the overload guard is armed",
      );
  }, sampleMs);
  timer.unref();
  return {
    get state() {
      return judge.state;
    },
    get overloaded() {
      return judge.state === "overloaded";
    },
    close() {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
