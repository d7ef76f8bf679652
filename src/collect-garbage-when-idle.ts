import { performance } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export interface IdleCollectorOptions {
  /** How much V8's old generation must have grown since the last full collection (MB) before an idle moment is used for one. */
  growthMb: number;
  /** How often the event loop's use is read (ms). @default 100 */
  tickMs?: number;
  /** Consecutive idle ticks before collecting: 300 ms at the defaults. @default 3 */
  idleTicks?: number;
  /** The event loop counts as idle while it is busy less than this share of a tick. @default 0.05 */
  idleBelow?: number;
  /** Told of each collection: the old generation's used size before and after (bytes) and how long it took (ms). */
  onCollected?: (collection: { usedBefore: number; usedAfter: number; ms: number }) => void;
  /** Test seams. @default the event loop's utilization since the last read, V8's old generation in use, a full collection */
  utilization?: () => number;
  oldUsed?: () => number;
  collect?: () => void;
}

/**
 * Keeps repeated bursts from growing the heap. V8 lets garbage build up far
 * past what is live before it collects, and keeps the pages it grew into:
 * without this, each burst of runs leaves RSS higher than the one before
 * until V8's limit (live size times up to 4) is reached. V8's own memory
 * reducer starts only 8 s after a major collection. When the event loop has
 * been idle for a moment (nothing to answer, no run stepping) and the heap
 * has grown by `growthMb` since the last full collection (its old generation:
 * the young one is emptied by cheap scavenges as it fills), this runs one
 * (tens of ms, while nothing waits): the next burst fills the space it freed
 * instead of growing the heap. Under steady load there is no idle moment and
 * V8's own policy holds.
 */
export function collectGarbageWhenIdle({
  growthMb,
  tickMs = 100,
  idleTicks = 3,
  idleBelow = 0.05,
  onCollected,
  utilization = eventLoopUtilization(),
  oldUsed = oldGenerationUsed,
  collect = fullCollection(),
}: IdleCollectorOptions): { stop(): void } {
  const growth = growthMb * 1024 * 1024;
  let usedAfterLast = oldUsed();
  let idle = 0;
  const timer = setInterval(() => {
    idle = utilization() < idleBelow ? idle + 1 : 0;
    if (idle < idleTicks) return;
    const usedBefore = oldUsed();
    if (usedBefore - usedAfterLast < growth) return;
    const started = performance.now();
    collect();
    // What stays is live: the next collection waits for as much growth again.
    usedAfterLast = oldUsed();
    idle = 0;
    onCollected?.({ usedBefore, usedAfter: usedAfterLast, ms: performance.now() - started });
  }, tickMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** What V8's old generation holds (bytes): what survived young collections, live or not, and large objects. */
function oldGenerationUsed(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) if (!YOUNG.has(space.space_name)) used += space.space_used_size;
  return used;
}

const YOUNG = new Set(["new_space", "new_large_object_space"]);

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
