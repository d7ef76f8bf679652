import { describe, expect, test } from "vitest";
import { costBudget, createStopPolicy, MIN_OUTPUT_TOKENS, timeBudget, tokenBudget, type BudgetSpent } from "../../src/agent/stop-policy.js";
import type { RunBudget } from "../../src/core/run-settings.js";
import { emptyUsage } from "../../src/core/usage.js";

const budget = (b: Partial<RunBudget> = {}): RunBudget => ({ max_steps: 10, max_tokens: null, max_seconds: null, max_cost_usd: null, grace_turn: true, ...b });
const spent = (s: Partial<BudgetSpent> & { tokens?: number } = {}): BudgetSpent => ({
  steps: 0,
  usage: { ...emptyUsage(), input_tokens: s.tokens ?? 0 },
  costUsd: 0,
  timeLeftMs: Infinity,
  ...s,
});
const call = (inputTokens: number, reserve: { inputTokens: number; outputTokens: number } | null = null) => ({ inputTokens, reserve, grace: false });

describe("each budget is a predicate: the most output a call may produce within it", () => {
  test("tokens: what is left after the call's input and the reserve", () => {
    expect(tokenBudget(null).room(spent({ tokens: 10 ** 9 }), call(1000))).toBe(Infinity);
    expect(tokenBudget(5000).room(spent({ tokens: 1000 }), call(1500))).toBe(2500);
    expect(tokenBudget(5000).room(spent({ tokens: 1000 }), call(1500, { inputTokens: 2000, outputTokens: 256 }))).toBe(244);
  });

  test("cost: what is left, in output tokens at the output price, after the input at the input price", () => {
    const sonnet = { input: 3e-6, output: 15e-6 };
    // $1 left; 100,000 input tokens cost $0.30; $0.70 buys 46,666 output tokens.
    expect(costBudget(1, sonnet).room(spent({ costUsd: 0 }), call(100_000))).toBe(46_666);
    expect(costBudget(1, sonnet).room(spent({ costUsd: 0.8 }), call(100_000))).toBeLessThan(0);
    expect(costBudget(1, { input: 1e-6, output: 0 }).room(spent({ costUsd: 0.5 }), call(100_000))).toBe(Infinity);
  });

  test("cost: an unknown cost never turns the budget off: a call without a price, or a run whose spend is unknown, has no room", () => {
    const sonnet = { input: 3e-6, output: 15e-6 };
    expect(costBudget(1, null).room(spent({ costUsd: 0 }), call(10))).toBeLessThan(MIN_OUTPUT_TOKENS);
    expect(costBudget(1, sonnet).room(spent({ costUsd: null }), call(10))).toBeLessThan(MIN_OUTPUT_TOKENS);
    // Without a cost budget, neither matters.
    expect(costBudget(null, null).room(spent({ costUsd: null }), call(10))).toBe(Infinity);
    const policy = createStopPolicy({ budget: budget({ max_cost_usd: 1 }), maxTokens: 4096, conditions: [costBudget(1, sonnet)] });
    expect(policy.beforeStep({ spent: spent({ costUsd: null }), inputTokens: 10, afterTools: false })).toEqual({ type: "stop", over: "cost" });
  });

  test("seconds: none left is no room, except for the grace call, which has its window", () => {
    expect(timeBudget().room(spent({ timeLeftMs: 10 }), call(1))).toBe(Infinity);
    expect(timeBudget().room(spent({ timeLeftMs: 0 }), call(1))).toBeLessThan(0);
    expect(timeBudget().room(spent({ timeLeftMs: -5 }), { ...call(1), grace: true })).toBe(Infinity);
  });
});

describe("beforeStep: go, grace or stop", () => {
  const policy = (b: Partial<RunBudget>, maxTokens = 4096) =>
    createStopPolicy({ budget: budget(b), maxTokens, conditions: [tokenBudget(b.max_tokens ?? null), costBudget(b.max_cost_usd ?? null, { input: 3e-6, output: 15e-6 }), timeBudget()] });

  test("no budget but steps: go, asking for the request's whole output", () => {
    expect(policy({}).beforeStep({ spent: spent(), inputTokens: 1000, afterTools: false })).toEqual({ type: "go", maxTokens: 4096 });
  });

  test("steps: the last step after tools is the grace call; with none left, stop; without grace, the last step is a normal call", () => {
    expect(policy({ max_steps: 3 }).beforeStep({ spent: spent({ steps: 2 }), inputTokens: 100, afterTools: true })).toMatchObject({ type: "grace", over: "steps" });
    expect(policy({ max_steps: 3 }).beforeStep({ spent: spent({ steps: 3 }), inputTokens: 100, afterTools: true })).toEqual({ type: "stop", over: "steps" });
    expect(policy({ max_steps: 3, grace_turn: false }).beforeStep({ spent: spent({ steps: 2 }), inputTokens: 100, afterTools: true })).toMatchObject({ type: "go" });
    // After a plain answer (a finish nudge), the last step is a normal call.
    expect(policy({ max_steps: 3 }).beforeStep({ spent: spent({ steps: 2 }), inputTokens: 100, afterTools: false })).toMatchObject({ type: "go" });
  });

  test("tokens: a normal call keeps room for a grace call after it; when it cannot, the call is the grace call; when even that does not fit, stop", () => {
    const p = policy({ max_tokens: 10_000 });
    // 1,000 in; the grace call after it reserved as 1,564 in + 256 out: 10,000 − 1,000 − 1,820 = 7,180, capped at 4,096.
    expect(p.beforeStep({ spent: spent(), inputTokens: 1000, afterTools: false })).toEqual({ type: "go", maxTokens: 4096 });
    expect(p.beforeStep({ spent: spent({ tokens: 6000 }), inputTokens: 1000, afterTools: false })).toEqual({ type: "go", maxTokens: 1180 });
    // 3,000 left: no room for both, room for the grace call alone, its output capped at what is left.
    expect(p.beforeStep({ spent: spent({ tokens: 7000 }), inputTokens: 1000, afterTools: true })).toEqual({ type: "grace", over: "tokens", maxTokens: 2000 });
    expect(p.beforeStep({ spent: spent({ tokens: 8800 }), inputTokens: 1000, afterTools: true })).toEqual({ type: "stop", over: "tokens" });
    // Without a grace turn, nothing is reserved.
    expect(policy({ max_tokens: 10_000, grace_turn: false }).beforeStep({ spent: spent({ tokens: 7000 }), inputTokens: 1000, afterTools: true })).toEqual({ type: "go", maxTokens: 2000 });
  });

  test("cost: the README's example — 100,000-token calls at $0.30 with max_cost_usd 1.00: a normal call, then the grace call, then stop", () => {
    const p = policy({ max_cost_usd: 1 });
    expect(p.beforeStep({ spent: spent({ costUsd: 0 }), inputTokens: 100_000, afterTools: false })).toMatchObject({ type: "go" });
    expect(p.beforeStep({ spent: spent({ costUsd: 0.3, steps: 1 }), inputTokens: 100_000, afterTools: true })).toMatchObject({ type: "grace", over: "cost" });
    expect(p.beforeStep({ spent: spent({ costUsd: 0.75, steps: 2 }), inputTokens: 100_000, afterTools: true })).toEqual({ type: "stop", over: "cost" });
  });

  test("seconds: out of time, the next call is the grace call (it has its window); without grace, stop", () => {
    expect(policy({ max_seconds: 10 }).beforeStep({ spent: spent({ timeLeftMs: 0 }), inputTokens: 100, afterTools: true })).toMatchObject({ type: "grace", over: "seconds" });
    expect(policy({ max_seconds: 10, grace_turn: false }).beforeStep({ spent: spent({ timeLeftMs: -1 }), inputTokens: 100, afterTools: true })).toEqual({ type: "stop", over: "seconds" });
  });

  test("a call never asks for less than the least useful answer, nor for more than the request's limit", () => {
    expect(MIN_OUTPUT_TOKENS).toBe(256);
    expect(policy({ max_tokens: 1300, grace_turn: false }).beforeStep({ spent: spent(), inputTokens: 1050, afterTools: false })).toEqual({ type: "stop", over: "tokens" });
    // A request limit under 256 is the least itself.
    expect(policy({ max_tokens: 1200, grace_turn: false }, 100).beforeStep({ spent: spent(), inputTokens: 1050, afterTools: false })).toEqual({ type: "go", maxTokens: 100 });
  });
});
