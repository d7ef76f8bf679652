import { performance } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export interface IdleCollectorOptions {
  /** How much V8's old generation must have grown (MB) since the last collection made here, or its lowest since, before an idle moment is used for one. */
  growthMb: number;
  /** How often the event loop's use is read (ms). @default 100 */
  tickMs?: number;
  /** Consecutive idle ticks before collecting: 300 ms at the defaults. @default 3 */
  idleTicks?: number;
  /** The event loop counts as idle while it is busy less than this share of a tick. @default 0.05 */
  idleBelow?: number;
  /** Told of each collection: the old generation's used size before and after (bytes) and how long it took (ms). */
  onCollected?: (collection: { usedBefore: number; usedAfter: number; ms: number }) => void;
  /** Test seam: the share of the time since its previous call that the event loop was busy. @default read from Node */
  utilization?: () => number;
  /** Test seam: what V8's old and young generations hold (bytes). @default read from V8 */
  heapUsed?: () => HeapUsed;
  /** Test seam: a full collection. @default V8's */
  collect?: () => void;
}

/** Growth that a collection mostly did not free was live: the threshold doubles, up to this many times the configured one. */
const MAX_BACKOFF = 16;

/**
 * Keeps repeated bursts from growing the heap. V8 lets garbage build up far
 * past what is live before it collects, and keeps the pages it grew into:
 * without this, each burst of runs leaves RSS higher than the one before
 * until V8's limit (live size times up to 4) is reached. V8's own memory
 * reducer starts only 8 s after a major collection. When the event loop has
 * been idle for a moment (no request being handled, no run stepping; runs
 * waiting on a model or a tool count as idle) and the old generation has
 * grown by `growthMb` (the young one is emptied by cheap scavenges as it
 * fills), this runs a full collection, tens of ms: the next burst fills the
 * space it freed instead of growing the heap. Growth that turns out live
 * (a history cache filling up) doubles the threshold, so live data is not
 * collected again and again, until V8's own collections bring the old
 * generation below what the last one here left. Load that keeps the event
 * loop busy leaves no idle moment, and V8's own policy holds.
 */
export function collectGarbageWhenIdle({
  growthMb,
  tickMs = 100,
  idleTicks = 3,
  idleBelow = 0.05,
  onCollected,
  utilization = eventLoopUtilization(),
  heapUsed = heapUsedNow,
  collect = fullCollection(),
}: IdleCollectorOptions): { stop(): void } {
  const growth = growthMb * 1024 * 1024;
  let threshold = growth;
  let baseline = heapUsed().old;
  let idle = 0;
  const timer = setInterval(() => {
    idle = utilization() < idleBelow ? idle + 1 : 0;
    const before = heapUsed();
    if (before.old < baseline) {
      // V8 collected below what the last collection here left: growth counts from the lowest, and what was backed off for is gone.
      baseline = before.old;
      threshold = growth;
    }
    if (idle < idleTicks || before.old - baseline < threshold) return;
    const started = performance.now();
    collect();
    const after = heapUsed();
    const ms = performance.now() - started;
    // A full collection promotes what is live in the young generation: freed is judged on both.
    const freed = before.old + before.young - (after.old + after.young);
    threshold = freed < (before.old - baseline) / 2 ? Math.min(threshold * 2, growth * MAX_BACKOFF) : growth;
    baseline = after.old;
    // The next collection waits for an idle moment of its own.
    idle = 0;
    onCollected?.({ usedBefore: before.old, usedAfter: after.old, ms });
  }, tickMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

interface HeapUsed {
  /** The old generation: what survived young collections, live or not, and large objects. */
  old: number;
  /** The young generation, emptied by scavenges as it fills. */
  young: number;
}

function heapUsedNow(): HeapUsed {
  const used = { old: 0, young: 0 };
  for (const space of getHeapSpaceStatistics())
    used[YOUNG.has(space.space_name) ? "young" : "old"] += space.space_used_size;
  return used;
}

const YOUNG = new Set(["new_space", "new_large_object_space"]);

/** The share of the time since the previous call that the event loop was busy. */
export function eventLoopUtilization(): () => number {
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
 * and workers made later do not get it. Throws when it is exposed under
 * another name (`--expose-gc-as`).
 */
export function fullCollection(): () => void {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === "function") return exposed as () => void;
  setFlagsFromString("--expose-gc");
  try {
    const gc: unknown = runInNewContext("typeof gc === 'function' ? gc : undefined");
    if (typeof gc !== "function") throw new Error("V8's gc is exposed under another name (--expose-gc-as)");
    return gc as () => void;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}
