/**
 * `TENANT_DAILY_COST_USD` and `RUN_MAX_COST_USD_LIMIT`: a tenant whose runs
 * cost more than its daily limit today gets `429 tenant_budget_exhausted`
 * on new runs (with `Retry-After` until 00:00 UTC); every run's cost budget
 * is at most the ceiling.
 */
import { describe, expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { TENANT_DAILY_COST_USD: "0.01", RUN_MAX_COST_USD_LIMIT: "0.5" } });
const client = () => api(f.loopd.app);

describe("a tenant's daily cost", () => {
  test("a run asking for a larger cost budget, or for none, gets the ceiling, and no more than what is left of its tenant's day", async () => {
    const conv = await client().createConversation({ provider: "anthropic", model: "claude-haiku-4-5" });
    f.llm.script(
      { text: "Hi.", usage: { input: 10, output: 2 } },
      { text: "Hi.", usage: { input: 10, output: 2 } },
      { text: "Hi.", usage: { input: 10, output: 2 } },
    );
    // $0.01 a day, nothing spent yet: the day is the tighter limit (the $0.5 ceiling is the run's otherwise).
    expect((await client().send(conv.id, { content: "Hello" })).json().run.budget.max_cost_usd).toBe(0.01);
    // Each run above cost 10 × $1/M + 2 × $5/M = $0.00002: what the next may spend is what is left.
    expect(
      (await client().send(conv.id, { content: "Hello", budget: { max_cost_usd: 5 } })).json().run.budget.max_cost_usd,
    ).toBeCloseTo(0.01 - 0.00002, 8);
    expect(
      (await client().send(conv.id, { content: "Hello", budget: { max_cost_usd: 0.001 } })).json().run.budget
        .max_cost_usd,
    ).toBe(0.001);
  });

  test("counts as a cost budget: a model without a price is refused", async () => {
    const res = await f.loopd.app.inject({
      method: "POST",
      url: "/conversations",
      payload: { provider: "openai", model: "my-local-model" },
    });
    expect(res.statusCode).toBe(400);
    // RUN_MAX_COST_USD_LIMIT is the run's cost limit here; it is named first.
    expect(res.json().error).toMatchObject({
      code: "invalid_request",
      details: { field: "RUN_MAX_COST_USD_LIMIT", model_field: "body.model", model: "my-local-model" },
    });
  });

  test("past the limit, new runs are refused with 429 until 00:00 UTC, saying the limit and what was spent; nothing is saved", async () => {
    const conv = await client().createConversation({ provider: "anthropic", model: "claude-sonnet-4-5" });
    // 10,000 input tokens at $3 per million: $0.03, three times the day's limit, in one run.
    f.llm.script({ text: "A long answer.", usage: { input: 10_000, output: 10 } });
    const first = (
      await client().send(conv.id, { content: "Read all of this." }, { "idempotency-key": "first-run" })
    ).json();
    expect(first.run.status).toBe("completed");
    expect(first.run.usage.cost_usd).toBeGreaterThan(0.01);

    const before = await rowCounts(f.database);
    const refused = await client().send(conv.id, { content: "And again." });
    expect(refused.statusCode).toBe(429);
    const error = refused.json().error;
    expect(error).toMatchObject({ code: "tenant_budget_exhausted", details: { limit_usd: 0.01 } });
    expect(error.details.spent_usd).toBeGreaterThanOrEqual(first.run.usage.cost_usd);
    const now = new Date();
    const secondsToMidnight =
      (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
    const retryAfter = Number(refused.headers["retry-after"]);
    expect(retryAfter).toBe(error.details.retry_after_s);
    expect(Math.abs(retryAfter - secondsToMidnight)).toBeLessThan(5);
    expect(await rowCounts(f.database)).toEqual(before);
    expect(f.llm.requests).toHaveLength(1);

    // Any conversation of the tenant; but a retry of a run already accepted is that run, not a refusal.
    const other = await client().createConversation({ provider: "anthropic", model: "claude-sonnet-4-5" });
    expect((await client().send(other.id, { content: "Hi" })).statusCode).toBe(429);
    const retried = await client().send(conv.id, { content: "Read all of this." }, { "idempotency-key": "first-run" });
    expect(retried.statusCode).toBe(200);
    expect(retried.json().run.id).toBe(first.run.id);
    expect(f.llm.requests).toHaveLength(1);
  });
});
