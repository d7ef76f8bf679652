import { describe, expect, test } from "vitest";
import { createRunClock } from "../../src/agent/run-clock.js";

describe("the run clock: the one place that knows a run's time budget", () => {
  let now = 1_000_000;
  const clock = (maxSeconds: number | null, modelCallTimeoutMs = 600_000) =>
    createRunClock({ startedAt: 1_000_000, maxSeconds, modelCallTimeoutMs, graceWindowMs: 30_000, now: () => now });

  test("time left and elapsed, with and without a budget", () => {
    now = 1_004_000;
    expect(clock(10).timeLeftMs()).toBe(6_000);
    expect(clock(10).elapsedMs()).toBe(4_000);
    expect(clock(null).timeLeftMs()).toBe(Infinity);
  });

  test("a call's deadline is the time left, at most the call timeout; the grace call gets at least the grace window", () => {
    now = 1_004_000;
    expect(clock(10).callTimeoutMs({ grace: false })).toBe(6_000);
    expect(clock(10).boundByBudget({ grace: false })).toBe(true);
    expect(clock(10_000).callTimeoutMs({ grace: false })).toBe(600_000);
    expect(clock(10_000).boundByBudget({ grace: false })).toBe(false);
    expect(clock(null).callTimeoutMs({ grace: false })).toBe(600_000);
    now = 1_050_000;
    // Out of time: the grace call has its window, and no more, whatever the call timeout.
    expect(clock(10).callTimeoutMs({ grace: true })).toBe(30_000);
    expect(clock(10, 5_000).callTimeoutMs({ grace: true })).toBe(5_000);
    expect(clock(10).callTimeoutMs({ grace: false })).toBe(0);
  });

  test("the tools' signal aborts at the deadline, and says it was the deadline; the run's own abort is not", async () => {
    now = Date.now();
    const c = createRunClock({ startedAt: Date.now(), maxSeconds: 0.05, modelCallTimeoutMs: 600_000 });
    const stop = c.toolSignal(undefined);
    await new Promise((resolve) => stop.signal!.addEventListener("abort", resolve, { once: true }));
    expect(stop.outOfTime()).toBe(true);
    stop.dispose();

    const run = new AbortController();
    const again = createRunClock({ startedAt: Date.now(), maxSeconds: 60, modelCallTimeoutMs: 600_000 }).toolSignal(
      run.signal,
    );
    run.abort();
    expect(again.signal!.aborted).toBe(true);
    expect(again.outOfTime()).toBe(false);
    again.dispose();
    // Without a time budget the run's own signal is used as it is.
    expect(
      createRunClock({ startedAt: 0, maxSeconds: null, modelCallTimeoutMs: 1 }).toolSignal(run.signal).signal,
    ).toBe(run.signal);
  });
});
