import { expect, test } from "vitest";
import { expectError } from "../helpers/expect-error.js";
import { rowCounts } from "../helpers/row-counts.js";
import { useLoopd } from "../helpers/use-loopd.js";

const f = useLoopd({ env: { MAX_EVENT_LOOP_DELAY_MS: "100" }, pressureSampleMs: 100 });

/** Keeps the event loop busy for `ms`, letting it turn only every 250 ms: the lag an overloaded process shows. */
async function overload(ms: number) {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    const stop = Date.now() + 250;
    while (Date.now() < stop) {
      // busy: nothing else runs
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test("an overloaded process answers 503 unavailable with Retry-After at once, /healthz included, and recovers when the lag is gone", async () => {
  const inject = f.loopd.app.inject.bind(f.loopd.app);
  // Healthy first: on a machine busy with other test files, the guard may already see lag from them.
  await healthyWithin(inject, 10_000);
  const before = await rowCounts(f.database);

  await overload(1_000);
  const [health, create] = await Promise.all([
    inject({ method: "GET", url: "/healthz" }),
    inject({ method: "POST", url: "/conversations", payload: { title: "while overloaded" } }),
  ]);
  for (const res of [health, create]) {
    const error = expectError(res, 503, "unavailable");
    expect(error.message).toMatch(/overloaded/);
    expect(res.headers["retry-after"]).toBe("5");
  }
  expect(await rowCounts(f.database)).toEqual(before);

  await healthyWithin(inject, 5_000);
  expect((await inject({ method: "POST", url: "/conversations" })).statusCode).toBe(201);
});

/** Asks /healthz until it answers 200; fails past `ms`. */
async function healthyWithin(inject: typeof f.loopd.app.inject, ms: number) {
  const deadline = Date.now() + ms;
  while ((await inject({ method: "GET", url: "/healthz" })).statusCode !== 200) {
    expect(Date.now()).toBeLessThan(deadline);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
