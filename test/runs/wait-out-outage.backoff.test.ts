import { expect, test } from "vitest";
import type { RunOutcome } from "../../src/core/run-outcome.js";
import { emptyUsage } from "../../src/core/usage.js";
import { MAX_PROBE_BACKOFF, waitOutOutage } from "../../src/runs/wait-out-outage.js";
import type { RunRequest } from "../../src/store/schema.js";

const NOW = Date.parse("2026-01-01T12:00:00Z");
const COOLDOWN = 30_000;
const down: RunOutcome = {
  status: "failed",
  stopReason: "error",
  error: { code: "provider_unavailable", message: "Overloaded" },
  steps: 1,
  usage: emptyUsage(),
};
const request = (extra: Partial<RunRequest> = {}): RunRequest => ({
  max_steps: 10,
  tool_choice: "auto",
  model: null,
  on_provider_outage: "wait",
  ...extra,
});
const run = (extra: Partial<RunRequest> = {}) => ({
  request: request(extra),
  createdAt: new Date(NOW - 5_000),
  pausedMs: 0,
});
const wait = (outcome: RunOutcome, { probes = 0, sinceMsAgo = 0, extra = {} } = {}) =>
  waitOutOutage(outcome, {
    run: run(extra),
    carried: probes === 0 ? null : { since: new Date(NOW - sinceMsAgo), probes },
    cooldownMs: COOLDOWN,
    maxWaitS: 3_600,
    now: NOW,
  });

test("a first outage parks the run one cooldown away, the wait doubling with each probe up to its cap", () => {
  expect(wait(down)).toMatchObject({
    status: "waiting",
    stopReason: null,
    error: down.error,
    steps: 1,
    outage: { wakeInMs: COOLDOWN, giveUpInMs: 3_600_000, since: null, probes: 1 },
  });
  expect(wait(down, { probes: 1, sinceMsAgo: 30_000 })).toMatchObject({
    outage: { wakeInMs: 2 * COOLDOWN, probes: 2 },
  });
  expect(wait(down, { probes: 3, sinceMsAgo: 210_000 })).toMatchObject({ outage: { wakeInMs: 8 * COOLDOWN } });
  expect(wait(down, { probes: 9, sinceMsAgo: 1_000_000 })).toMatchObject({
    outage: {
      wakeInMs: MAX_PROBE_BACKOFF * COOLDOWN,
      giveUpInMs: 2_600_000,
      since: new Date(NOW - 1_000_000).toISOString(),
    },
  });
});

test("the wait ends at MODEL_OUTAGE_MAX_WAIT_S from the first park, or at max_seconds of the run's clock: the last wake is the give-up, and past it the run fails", () => {
  expect(wait(down, { probes: 9, sinceMsAgo: 3_590_000 })).toMatchObject({
    outage: { wakeInMs: 10_000, giveUpInMs: 10_000 },
  });
  expect(wait(down, { probes: 9, sinceMsAgo: 3_600_000 })).toBe(down);
  // Created 5 s ago with max_seconds 20: 15 s left, the wait counted against it.
  expect(wait(down, { extra: { budget: budgetOf(20) } })).toMatchObject({
    outage: { wakeInMs: 15_000, giveUpInMs: 15_000 },
  });
  expect(wait(down, { extra: { budget: budgetOf(5) } })).toBe(down);
});

test("a run that fails on anything but an outage, or was not asked to wait, ends as it would have", () => {
  const wrong: RunOutcome = { ...down, error: { code: "provider_error", message: "invalid request" } };
  expect(wait(wrong)).toBe(wrong);
  expect(wait(down, { extra: { on_provider_outage: "fail" } })).toBe(down);
  const runWithout = { ...run(), request: { max_steps: 10, tool_choice: "auto" as const, model: null } };
  expect(waitOutOutage(down, { run: runWithout, carried: null, cooldownMs: COOLDOWN, maxWaitS: 3_600, now: NOW })).toBe(
    down,
  );
});

function budgetOf(maxSeconds: number) {
  return { max_steps: 10, max_tokens: null, max_seconds: maxSeconds, max_cost_usd: null, grace_turn: true };
}
