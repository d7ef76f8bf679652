import { linkedAbort } from "../util/linked-abort.js";

/** The default of the grace call's window when a run is out of time (config `RUN_GRACE_MS`). */
export const DEFAULT_GRACE_WINDOW_MS = 30_000;

export interface RunClock {
  /** Since the run's clock started, time spent paused for the application not counted. */
  elapsedMs(): number;
  /** What is left of `max_seconds`: Infinity without a time budget, 0 or less once it ran out. */
  timeLeftMs(): number;
  /**
   * How long a model call may take: the time left, at most the call timeout.
   * The grace call takes at least the grace window, however little is left:
   * that window is all a run may pass its time budget by.
   */
  callTimeoutMs({ grace }: { grace: boolean }): number;
  /** Whether a call given `callTimeoutMs` is stopped by the time budget (rather than by the call timeout) when it expires. */
  boundByBudget({ grace }: { grace: boolean }): boolean;
  /**
   * The signal that stops tools in flight: the run's own, and the time
   * budget's deadline. `outOfTime()` tells, after a call was stopped, which
   * stopped it. Dispose it when the tools are done.
   */
  toolSignal(signal: AbortSignal | undefined): {
    signal: AbortSignal | undefined;
    outOfTime(): boolean;
    dispose(): void;
  };
}

/** The one place that knows a run's time budget. */
export function createRunClock({
  startedAt,
  maxSeconds,
  modelCallTimeoutMs,
  graceWindowMs = DEFAULT_GRACE_WINDOW_MS,
  now = Date.now,
}: {
  /** When the run's clock started (ms since the epoch, time spent paused added back). */
  startedAt: number;
  maxSeconds: number | null;
  modelCallTimeoutMs: number;
  /** @default 30000 */
  graceWindowMs?: number;
  now?: () => number;
}): RunClock {
  const timeLeftMs = () => (maxSeconds === null ? Infinity : startedAt + maxSeconds * 1000 - now());
  const budgetMs = ({ grace }: { grace: boolean }) =>
    grace ? Math.max(timeLeftMs(), graceWindowMs) : Math.max(0, timeLeftMs());
  return {
    elapsedMs: () => now() - startedAt,
    timeLeftMs,
    callTimeoutMs: (call) => Math.min(modelCallTimeoutMs, budgetMs(call)),
    boundByBudget: (call) => budgetMs(call) <= modelCallTimeoutMs,
    toolSignal(signal) {
      const left = timeLeftMs();
      if (!Number.isFinite(left)) return { signal, outOfTime: () => false, dispose: () => {} };
      const deadline = AbortSignal.timeout(Math.max(0, left));
      const link = linkedAbort(deadline, ...(signal ? [signal] : []));
      return { signal: link.signal, outOfTime: () => deadline.aborted && !signal?.aborted, dispose: link.dispose };
    },
  };
}
