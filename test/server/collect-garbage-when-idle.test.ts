import { execFile } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { runInNewContext } from "node:vm";
import { Worker } from "node:worker_threads";
import { afterEach, expect, test, vi } from "vitest";
import { collectGarbageWhenIdle, eventLoopUtilization } from "../../src/server/collect-garbage-when-idle.js";

const MB = 1_048_576;
const run = promisify(execFile);

afterEach(() => {
  vi.useRealTimers();
});

/** A collector on fake timers with every reading in the test's hands; a collection leaves `left(used)`, 60 MB unless told. */
function scripted({ growthMb = 16 }: { growthMb?: number } = {}) {
  vi.useFakeTimers();
  const state = { utilization: 0, used: 100 * MB, young: 0, collections: 0, left: (_used: number) => 60 * MB };
  const collector = collectGarbageWhenIdle({
    growthMb,
    tickMs: 250,
    idleTicks: 2,
    utilization: () => state.utilization,
    heapUsed: () => ({ old: state.used, young: state.young }),
    collect: () => {
      state.collections++;
      state.used = state.left(state.used);
    },
  });
  return { state, collector, ticks: (n: number) => vi.advanceTimersByTime(250 * n) };
}

test("a heap that grew is collected once the event loop has been idle for two ticks, not while it is busy", () => {
  const { state, collector, ticks } = scripted();
  state.used += 40 * MB;
  state.utilization = 0.5;
  ticks(20);
  expect(state.collections).toBe(0);
  // One idle tick is a pause, not idleness.
  state.utilization = 0.01;
  ticks(1);
  expect(state.collections).toBe(0);
  ticks(1);
  expect(state.collections).toBe(1);
  collector.stop();
});

test("busy ticks in between start the count of idle ones again", () => {
  const { state, collector, ticks } = scripted();
  state.used += 40 * MB;
  for (let i = 0; i < 10; i++) {
    state.utilization = 0.01;
    ticks(1);
    state.utilization = 0.2;
    ticks(1);
  }
  expect(state.collections).toBe(0);
  collector.stop();
});

test("an idle heap is collected again only after it has grown by growthMb since the last collection", () => {
  const { state, collector, ticks } = scripted({ growthMb: 16 });
  state.used += 15 * MB;
  ticks(20);
  expect(state.collections).toBe(0);
  state.used += 2 * MB;
  ticks(2);
  expect(state.collections).toBe(1);
  // After it the heap holds 60 MB: idle for long, nothing grows, nothing is collected.
  ticks(40);
  expect(state.collections).toBe(1);
  state.used = 75 * MB;
  ticks(10);
  expect(state.collections).toBe(1);
  state.used = 77 * MB;
  ticks(2);
  expect(state.collections).toBe(2);
  collector.stop();
});

test("after a collection the next waits for idle ticks of its own, however much the heap grows", () => {
  const { state, collector, ticks } = scripted();
  state.used += 40 * MB;
  ticks(2);
  expect(state.collections).toBe(1);
  state.used += 400 * MB;
  ticks(1);
  expect(state.collections).toBe(1);
  ticks(1);
  expect(state.collections).toBe(2);
  collector.stop();
});

test("growth a collection did not free doubles the threshold (live data is not collected again and again); one that frees resets it", () => {
  const { state, collector, ticks } = scripted({ growthMb: 16 });
  state.left = (used) => used - 1 * MB;
  state.used = 117 * MB;
  ticks(2);
  expect(state.collections).toBe(1);
  // 116 MB are live: the next needs 32 MB more.
  state.used = 147 * MB;
  ticks(10);
  expect(state.collections).toBe(1);
  state.used = 149 * MB;
  ticks(2);
  expect(state.collections).toBe(2);
  // 148 live: 64 more.
  state.used = 211 * MB;
  ticks(10);
  expect(state.collections).toBe(2);
  state.left = () => 60 * MB;
  state.used = 213 * MB;
  ticks(2);
  expect(state.collections).toBe(3);
  // Mostly garbage after all: back to 16.
  state.used = 77 * MB;
  ticks(2);
  expect(state.collections).toBe(4);
  collector.stop();
});

test("the back-off stops at 16 times growthMb", () => {
  const { state, collector, ticks } = scripted({ growthMb: 16 });
  state.left = (used) => used - 1 * MB;
  for (let i = 0; i < 6; i++) {
    state.used += 16 * MB * 2 ** Math.min(i, 4);
    ticks(2);
    expect(state.collections).toBe(i + 1);
  }
  // Capped at 256 MB, not 512.
  state.used += 256 * MB;
  ticks(2);
  expect(state.collections).toBe(7);
  collector.stop();
});

test("freed is weighed against the growth since the lowest, young generation included", () => {
  const { state, collector, ticks } = scripted({ growthMb: 16 });
  // 40 MB grown, 19 MB freed: less than half of the growth (though more than half of growthMb), so it backs off to 32.
  state.left = (used) => used - 19 * MB;
  state.used = 140 * MB;
  ticks(2);
  expect(state.collections).toBe(1);
  state.used += 31 * MB;
  ticks(2);
  expect(state.collections).toBe(1);
  // 33 grown, 19 freed: more than half, back to 16.
  state.used += 2 * MB;
  ticks(2);
  expect(state.collections).toBe(2);
  // 16 MB grown, 4 MB of the old generation freed, and 6 MB of young garbage gone with it: 10 MB, more than half.
  state.young = 6 * MB;
  state.left = (used) => {
    state.young = 0;
    return used - 4 * MB;
  };
  state.used += 16 * MB;
  ticks(2);
  expect(state.collections).toBe(3);
  state.used += 16 * MB;
  ticks(2);
  expect(state.collections).toBe(4);
  collector.stop();
});

test("a back-off ends when V8's own collections bring the old generation below what the last one here left", () => {
  const { state, collector, ticks } = scripted({ growthMb: 16 });
  state.left = (used) => used - 1 * MB;
  state.used = 117 * MB;
  ticks(2);
  expect(state.collections).toBe(1);
  // Backed off to 32 MB above 116; V8 then frees what was live in flight.
  state.used = 60 * MB;
  ticks(1);
  state.left = () => 60 * MB;
  state.used = 77 * MB;
  ticks(2);
  expect(state.collections).toBe(2);
  collector.stop();
});

test("growth is counted from the lowest the old generation fell to, V8's own collections included", () => {
  const { state, collector, ticks } = scripted({ growthMb: 16 });
  state.utilization = 0.5;
  state.used = 50 * MB;
  ticks(1);
  state.used = 67 * MB;
  state.utilization = 0;
  ticks(2);
  expect(state.collections).toBe(1);
  collector.stop();
});

test("after stop() nothing more is collected", () => {
  const { state, collector, ticks } = scripted();
  collector.stop();
  state.used += 400 * MB;
  ticks(40);
  expect(state.collections).toBe(0);
});

test("with V8's own readings, garbage that outlived young collections is collected when the process goes idle", async () => {
  const collected = new Promise<{ usedBefore: number; usedAfter: number }>((resolve) => {
    const collector = collectGarbageWhenIdle({
      growthMb: 8,
      tickMs: 20,
      onCollected: (collection) => {
        collector.stop();
        resolve(collection);
      },
    });
  });
  makeOldGarbage();
  const { usedBefore, usedAfter } = await collected;
  expect(usedBefore - usedAfter).toBeGreaterThan(16 * MB);
});

/** Objects kept across many allocations are promoted to the old space, where only a full collection frees them: garbage on return. */
function makeOldGarbage(): void {
  const kept: Array<{ id: number; text: string }> = [];
  for (let i = 0; i < 300_000; i++) kept.push({ id: i, text: `garbage ${i}` });
  if (kept.length !== 300_000) throw new Error("unreachable");
}

test("contexts and workers made after the collector is set up do not get gc: only loopd can collect", async () => {
  collectGarbageWhenIdle({ growthMb: 16 }).stop();
  expect(runInNewContext("typeof gc")).toBe("undefined");
  const worker = new Worker("require('node:worker_threads').parentPort.postMessage(typeof gc)", { eval: true });
  const [seen] = (await once(worker, "message")) as [string];
  await worker.terminate();
  expect(seen).toBe("undefined");
});

test("the event loop's utilization is read since the previous read: busy, then idle", async () => {
  const read = eventLoopUtilization();
  const until = performance.now() + 60;
  while (performance.now() < until);
  expect(read()).toBeGreaterThan(0.5);
  await new Promise((resolve) => setTimeout(resolve, 60));
  expect(read()).toBeLessThan(0.5);
});

test("where gc is exposed under another name (--expose-gc-as), asking for it throws instead of handing back nothing", async () => {
  const script = `import("${pathToFileURL(path.resolve("src/server/collect-garbage-when-idle.ts")).href}").then(({ fullCollection }) => { try { fullCollection(); console.log("got it"); } catch (err) { console.log(err.message); } })`;
  const { stdout } = await run(process.execPath, [
    "--expose-gc-as=collect",
    "--import",
    "tsx",
    "--input-type=module",
    "-e",
    script,
  ]);
  expect(stdout.trim()).toBe("V8's gc is exposed under another name (--expose-gc-as)");
});
