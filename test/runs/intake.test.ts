import { afterEach, expect, test, vi } from "vitest";
import { createIntake } from "../../src/runs/intake.js";

afterEach(() => vi.useRealTimers());

/** Whether `promise` has settled by now (its callbacks run first). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

test("a model call goes at once while no request is being taken, and with the priority off", async () => {
  expect(await settled(createIntake({ maxWaitMs: 250 }).quiet())).toBe(true);
  const off = createIntake({ maxWaitMs: 0 });
  off.begin();
  expect(await settled(off.quiet())).toBe(true);
  expect(off.waiting).toBe(0);
});

test("a model call waits until the last request being taken is taken, not the first", async () => {
  const intake = createIntake({ maxWaitMs: 60_000 });
  const [first, second] = [intake.begin(), intake.begin()];
  const calls = [intake.quiet(), intake.quiet()];
  expect(intake).toMatchObject({ taking: 2, waiting: 2 });
  first();
  // Taken twice counts once.
  first();
  expect(await settled(Promise.all(calls))).toBe(false);
  expect(intake).toMatchObject({ taking: 1, waiting: 2 });
  second();
  expect(await settled(Promise.all(calls))).toBe(true);
  expect(intake).toMatchObject({ taking: 0, waiting: 0 });
});

test("a model call waits no longer than maxWaitMs, however long the request it waits for takes", async () => {
  vi.useFakeTimers();
  const intake = createIntake({ maxWaitMs: 250 });
  intake.begin();
  const call = intake.quiet();
  vi.advanceTimersByTime(249);
  expect(await settled(call)).toBe(false);
  vi.advanceTimersByTime(1);
  expect(await settled(call)).toBe(true);
  expect(intake).toMatchObject({ taking: 0, waiting: 0 });
});

test("a request not taken within maxWaitMs stops counting: a slow one holds the runs once, not for as long as it takes", async () => {
  vi.useFakeTimers();
  const intake = createIntake({ maxWaitMs: 250 });
  const slow = intake.begin();
  vi.advanceTimersByTime(100);
  const call = intake.quiet();
  vi.advanceTimersByTime(150);
  expect(intake.taking).toBe(0);
  expect(await settled(call)).toBe(true);
  expect(await settled(intake.quiet())).toBe(true);
  // Taken later: no effect on the others.
  const other = intake.begin();
  slow();
  expect(intake.taking).toBe(1);
  other();
  expect(intake.taking).toBe(0);
});
