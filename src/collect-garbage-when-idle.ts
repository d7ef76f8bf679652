import { performance } from "node:perf_hooks";
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export interface IdleCollectorOptions {
  /** How much V8's heap must have grown since the last full collection (MB) before an idle moment is used for one. */
  growthMb: number;
  /** How often the event loop's use is read (ms). @default 250 */
  tickMs?: number;
  /** Consecutive idle ticks before collecting: half a second at the defaults. @default 2 */
  idleTicks?: number;
  /** The event loop counts as idle while it is busy less than this share of a tick. @default 0.05 */
  idleBelow?: number;
  /** Told of each collection: the heap's used size before and after (bytes) and how long it took (ms). */
  onCollected?: (collection: { usedBefore: number; usedAfter: number; ms: number }) => void;
  /** Test seams. @default the event loop's utilization since the last read, V8's used heap, a full collection */
  utilization?: () => number;
  heapUsed?: () => number;
  collect?: () => void;
}

/**
 * Keeps repeated bursts from growing the heap. V8 lets garbage build up far
 * past what is live before it collects, and keeps the pages it grew into:
 * without this, each burst of runs leaves RSS higher than the one before
 * until V8's limit (live size times up to 4) is reached. V8's own memory
 * reducer starts only 8 s after a major collection. When the event loop has
 * been idle for a moment (nothing to answer, no run stepping) and the heap
 * has grown by `growthMb` since the last full collection, this runs one
 * (tens of ms, while nothing waits): the next burst fills the space it freed
 * instead of growing the heap. Under steady load there is no idle moment and
 * V8's own policy holds.
 */
export function collectGarbageWhenIdle({
  growthMb,
  tickMs = 250,
  idleTicks = 2,
  idleBelow = 0.05,
  onCollected,
  utilization = eventLoopUtilization(),
  heapUsed = () => getHeapStatistics().used_heap_size,
  collect = fullCollection(),
}: IdleCollectorOptions): { stop(): void } {
  const growth = growthMb * 1024 * 1024;
  let usedAfterLast = heapUsed();
  let idle = 0;
  const timer = setInterval(() => {
    idle = utilization() < idleBelow ? idle + 1 : 0;
    if (idle < idleTicks) return;
    const usedBefore = heapUsed();
    if (usedBefore - usedAfterLast < growth) return;
    const started = performance.now();
    collect();
    // What stays is live: the next collection waits for as much growth again.
    usedAfterLast = heapUsed();
    idle = 0;
    onCollected?.({ usedBefore, usedAfter: usedAfterLast, ms: performance.now() - started });
  }, tickMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** The share of the time since the previous call that the event loop was busy. */
function eventLoopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

/**
 * V8's full collection, which Node exposes only behind `--expose-gc`: the
 * flag is set just long enough to read `gc` from a new context, so contexts
 * and workers made later do not get it.
 */
export function fullCollection(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString("--expose-gc");
  try {
    return runInNewContext("gc") as () => void;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}
