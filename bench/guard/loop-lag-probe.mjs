/**
 * Preloaded into a loopd by guard (`NODE_OPTIONS=--import …`): how late a
 * 50 ms timer fires, a line per tick (`<epoch ms> <late ms>`) appended to
 * BENCH_LAG_FILE. Independent of either version's overload guard, it says
 * whether the event loop was turning when the guard refused a request. A
 * loop blocked for a while shows as one tick that late once it turns again.
 */
import { appendFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import process from "node:process";
import { setTimeout } from "node:timers";

const file = process.env.BENCH_LAG_FILE;
const EVERY_MS = 50;
if (file) {
  let due = performance.now() + EVERY_MS;
  const tick = () => {
    const now = performance.now();
    appendFileSync(file, `${(performance.timeOrigin + now).toFixed(1)} ${Math.max(0, now - due).toFixed(1)}\n`);
    due = now + EVERY_MS;
    setTimeout(tick, EVERY_MS).unref();
  };
  setTimeout(tick, EVERY_MS).unref();
}
