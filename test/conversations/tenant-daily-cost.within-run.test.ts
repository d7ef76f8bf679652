/**
 * `TENANT_DAILY_COST_USD` is checked only when a run is admitted. Without a
 * RUN_MAX_COST_USD_LIMIT a run admitted at $0 spent has no cost limit at
 * all: it spends as long as its steps last, any multiple of the tenant's
 * day (and MAX_ACTIVE_RUNS_PER_TENANT such runs may be admitted at once).
 */
import { describe, expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { TENANT_DAILY_COST_USD: "0.01" } });
const client = () => api(f.loopd.app);

describe("a tenant's daily cost within one run", () => {
  test("a run admitted under the day's limit is stopped near it, not left to spend fifteen times it", async () => {
    const conv = await client().createConversation({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      tools: ["get_current_time"],
    });
    // 10,000 input tokens at $3 per million: $0.03 a step, three times the day's limit each.
    const step = { toolCalls: [{ name: "get_current_time", input: {} }], usage: { input: 10_000, output: 10 } };
    f.llm.script(step, step, step, step, { text: "Done.", usage: { input: 10_000, output: 10 } });
    const res = await client().send(conv.id, { content: "Check the time five times." });
    expect(res.statusCode, res.body).toBe(200);
    const run = res.json().run;
    // Before the fix: budget.max_cost_usd is null and the run spends $0.15 with a $0.01 daily limit.
    expect(run.usage.cost_usd).toBeLessThan(0.05);
    expect(run.budget.max_cost_usd).not.toBeNull();
  });
});
