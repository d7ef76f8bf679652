import { describe, expect, test } from "vitest";
import { AppError } from "../../src/errors.js";
import { createTenantDailyCost } from "../../src/conversations/tenant-daily-cost.js";

/** A tenant's cost today, as the database would answer it, counting the reads. */
function fakeCosts(initial: number) {
  const state = { spent: initial, reads: [] as Array<{ tenant: string; since: string }> };
  const costSince = async (tenant: string, since: Date) => {
    state.reads.push({ tenant, since: since.toISOString() });
    return state.spent;
  };
  return { state, costSince };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: unknown) => (err instanceof AppError ? err : Promise.reject(err)),
  );

describe("TENANT_DAILY_COST_USD: the check before a new run", () => {
  test("reads the day's total from 00:00 UTC, then keeps it for the TTL: one read per tenant per TTL, not one per request", async () => {
    const { state, costSince } = fakeCosts(0.2);
    let now = Date.parse("2026-12-06T10:00:00Z");
    const cost = createTenantDailyCost({ limitUsd: 1, costSince, now: () => now, ttlMs: 5000 });
    // What is left of the day comes back: a run admitted gets no more than that to spend.
    for (let i = 0; i < 10; i++) expect(await cost.check("acme")).toBeCloseTo(0.8);
    expect(state.reads).toEqual([{ tenant: "acme", since: "2026-12-06T00:00:00.000Z" }]);
    state.spent = 1.5;
    now += 4999;
    expect(await refusal(cost.check("acme"))).toBeNull();
    now += 1;
    const err = await refusal(cost.check("acme"));
    expect(err).toMatchObject({
      code: "tenant_budget_exhausted",
      details: { limit_usd: 1, spent_usd: 1.5, retry_after_s: 14 * 3600 - 5 },
    });
    expect(state.reads).toHaveLength(2);
  });

  test("a run of the tenant that ended here makes the next check read again; past the limit stays past until the next UTC day", async () => {
    const { state, costSince } = fakeCosts(0.9);
    let now = Date.parse("2026-12-06T23:59:00Z");
    const cost = createTenantDailyCost({ limitUsd: 1, costSince, now: () => now, ttlMs: 5000 });
    await cost.check("acme");
    state.spent = 1.1;
    cost.forget("acme");
    expect(await refusal(cost.check("acme"))).toMatchObject({
      code: "tenant_budget_exhausted",
      details: { retry_after_s: 60 },
    });
    now += 30_000;
    expect(await refusal(cost.check("acme"))).not.toBeNull();
    expect(state.reads).toHaveLength(2);
    // A new day: read afresh, from its own midnight.
    now += 31_000;
    state.spent = 0;
    expect(await refusal(cost.check("acme"))).toBeNull();
    expect(state.reads.at(-1)).toEqual({ tenant: "acme", since: "2026-12-07T00:00:00.000Z" });
  });

  test("without a limit nothing is read", async () => {
    const { state, costSince } = fakeCosts(1e9);
    await createTenantDailyCost({ limitUsd: null, costSince }).check("acme");
    expect(state.reads).toHaveLength(0);
  });
});
