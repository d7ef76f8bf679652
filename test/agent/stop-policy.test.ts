import { describe, expect, test } from "vitest";
import { graceNotice, graceTurnOf, NOTICE_TOKENS } from "../../src/agent/grace-turn.js";
import { costBudget, timeBudget, tokenBudget, type BudgetSpent } from "../../src/agent/budget-conditions.js";
import { createStopPolicy, MIN_OUTPUT_TOKENS } from "../../src/agent/stop-policy.js";
import type { NewMessage } from "../../src/core/messages.js";
import type { RunBudget } from "../../src/core/run-settings.js";
import { emptyUsage } from "../../src/core/usage.js";

const budget = (b: Partial<RunBudget> = {}): RunBudget => ({
  max_steps: 10,
  max_tokens: null,
  max_seconds: null,
  max_cost_usd: null,
  grace_turn: true,
  ...b,
});
const spent = (s: Partial<BudgetSpent> & { tokens?: number } = {}): BudgetSpent => ({
  steps: 0,
  usage: { ...emptyUsage(), input_tokens: s.tokens ?? 0 },
  costUsd: 0,
  timeLeftMs: Infinity,
  ...s,
});
const call = (inputTokens: number, reserve: { inputTokens: number } | null = null) => ({
  inputTokens,
  reserve,
  grace: false,
});

describe("each budget is a predicate: the most output a call may produce within it", () => {
  test("tokens: what is left after the call's input and the reserve (the grace call's input)", () => {
    expect(tokenBudget(null).room(spent({ tokens: 10 ** 9 }), call(1000))).toBe(Infinity);
    expect(tokenBudget(5000).room(spent({ tokens: 1000 }), call(1500))).toBe(2500);
    expect(tokenBudget(5000).room(spent({ tokens: 1000 }), call(1500, { inputTokens: 2000 }))).toBe(500);
  });

  test("cost: what is left, in output tokens at the output price, after the input at the input price", () => {
    const sonnet = { input: 3e-6, output: 15e-6 };
    // $1 left; 100,000 input tokens cost $0.30; $0.70 buys 46,666 output tokens.
    expect(costBudget(1, sonnet).room(spent({ costUsd: 0 }), call(100_000))).toBe(46_666);
    expect(costBudget(1, sonnet).room(spent({ costUsd: 0.8 }), call(100_000))).toBeLessThan(0);
    // The reserve at the input price: $0.70 − $0.33 buys 24,666.
    expect(costBudget(1, sonnet).room(spent({ costUsd: 0 }), call(100_000, { inputTokens: 110_000 }))).toBe(24_666);
    expect(costBudget(1, { input: 1e-6, output: 0 }).room(spent({ costUsd: 0.5 }), call(100_000))).toBe(Infinity);
  });

  test("cost: an unknown cost never turns the budget off: a call without a price, or a run whose spend is unknown, has no room", () => {
    const sonnet = { input: 3e-6, output: 15e-6 };
    expect(costBudget(1, null).room(spent({ costUsd: 0 }), call(10))).toBeLessThan(MIN_OUTPUT_TOKENS);
    expect(costBudget(1, sonnet).room(spent({ costUsd: null }), call(10))).toBeLessThan(MIN_OUTPUT_TOKENS);
    // Without a cost budget, neither matters.
    expect(costBudget(null, null).room(spent({ costUsd: null }), call(10))).toBe(Infinity);
    const policy = createStopPolicy({
      budget: budget({ max_cost_usd: 1 }),
      maxTokens: 4096,
      conditions: [costBudget(1, sonnet)],
    });
    expect(policy.beforeStep({ spent: spent({ costUsd: null }), inputTokens: 10, afterTools: false })).toEqual({
      type: "stop",
      over: "cost",
    });
  });

  test("seconds: none left is no room, except for the grace call, which has its window", () => {
    expect(timeBudget().room(spent({ timeLeftMs: 10 }), call(1))).toBe(Infinity);
    expect(timeBudget().room(spent({ timeLeftMs: 0 }), call(1))).toBeLessThan(0);
    expect(timeBudget().room(spent({ timeLeftMs: -5 }), { ...call(1), grace: true })).toBe(Infinity);
  });
});

describe("beforeStep: go, grace or stop", () => {
  const policy = (b: Partial<RunBudget>, maxTokens = 4096) =>
    createStopPolicy({
      budget: budget(b),
      maxTokens,
      conditions: [
        tokenBudget(b.max_tokens ?? null),
        costBudget(b.max_cost_usd ?? null, { input: 3e-6, output: 15e-6 }),
        timeBudget(),
      ],
    });

  test("no budget but steps: go, asking for the request's whole output", () => {
    expect(policy({}).beforeStep({ spent: spent(), inputTokens: 1000, afterTools: false })).toEqual({
      type: "go",
      maxTokens: 4096,
    });
  });

  test("steps: the last step after tools is the grace call; with none left, stop; without grace, the last step is a normal call", () => {
    expect(
      policy({ max_steps: 3 }).beforeStep({ spent: spent({ steps: 2 }), inputTokens: 100, afterTools: true }),
    ).toMatchObject({ type: "grace", over: "steps" });
    expect(
      policy({ max_steps: 3 }).beforeStep({ spent: spent({ steps: 3 }), inputTokens: 100, afterTools: true }),
    ).toEqual({ type: "stop", over: "steps" });
    expect(
      policy({ max_steps: 3, grace_turn: false }).beforeStep({
        spent: spent({ steps: 2 }),
        inputTokens: 100,
        afterTools: true,
      }),
    ).toMatchObject({ type: "go" });
    // After a plain answer (a finish nudge), the last step is a normal call.
    expect(
      policy({ max_steps: 3 }).beforeStep({ spent: spent({ steps: 2 }), inputTokens: 100, afterTools: false }),
    ).toMatchObject({ type: "go" });
  });

  test("tokens: a normal call is made when it and the grace call after it fit as the steps have shown them; else the grace call; when even that does not fit, stop", () => {
    const p = policy({ max_tokens: 10_000 });
    // Before any step: 1,000 in, a tenth of it out and as much again of tools' results; the grace call 1,000 + 200 + the notice in,
    // 256 out: fits. The answer is the grace call's input too, so it gets half of what is left beyond the expected 100: (7,765 + 100 − 256) / 2.
    expect(p.beforeStep({ spent: spent(), inputTokens: 1000, afterTools: false })).toEqual({
      type: "go",
      maxTokens: Math.floor((10_000 - 1000 - (1000 + 200 + NOTICE_TOKENS) + 100 - MIN_OUTPUT_TOKENS) / 2),
    });
    // Steps showed 50 out and 200 added: 10,000 − 6,000 − 1,000 − (1,000 + 200 + the notice) left; an answer longer than the
    // 50 shown also grows the grace call's input, so it gets half of what is left beyond them and the grace call's 256.
    const shown = { growth: 200, output: 50 };
    expect(p.beforeStep({ spent: spent({ tokens: 6000 }), inputTokens: 1000, afterTools: false, shown })).toEqual({
      type: "go",
      maxTokens: Math.floor((1800 - NOTICE_TOKENS + 50 - MIN_OUTPUT_TOKENS) / 2),
    });
    // The step and its grace call need 1,000 + 50 + 1,235 + 256 = 2,541: with 2,540 left, the call is the grace call, its output capped at what is left.
    const edge = 10_000 - (2 * 1000 + 200 + NOTICE_TOKENS + 50 + MIN_OUTPUT_TOKENS);
    expect(p.beforeStep({ spent: spent({ tokens: edge }), inputTokens: 1000, afterTools: true, shown })).toMatchObject({
      type: "go",
    });
    expect(p.beforeStep({ spent: spent({ tokens: edge + 1 }), inputTokens: 1000, afterTools: true, shown })).toEqual({
      type: "grace",
      over: "tokens",
      maxTokens: 10_000 - edge - 1 - 1000,
    });
    expect(p.beforeStep({ spent: spent({ tokens: 8800 }), inputTokens: 1000, afterTools: true, shown })).toEqual({
      type: "stop",
      over: "tokens",
    });
    // Without a grace turn, nothing is reserved.
    expect(
      policy({ max_tokens: 10_000, grace_turn: false }).beforeStep({
        spent: spent({ tokens: 7000 }),
        inputTokens: 1000,
        afterTools: true,
      }),
    ).toEqual({ type: "go", maxTokens: 2000 });
  });

  test("a budget that affords a tool step and the grace call gets both: 2.5 calls' worth of tokens", () => {
    // A call: 1,000 in, 40 out. The step adds its answer and a 30-token result; the grace call then reads 1,070 + the notice.
    const budget = Math.round(2.5 * 1040);
    const p = policy({ max_tokens: budget });
    expect(p.beforeStep({ spent: spent(), inputTokens: 1000, afterTools: false })).toMatchObject({ type: "go" });
    const after = { ...spent({ steps: 1 }), usage: { ...emptyUsage(), input_tokens: 1000, output_tokens: 40 } };
    expect(
      p.beforeStep({ spent: after, inputTokens: 1070, afterTools: true, shown: { growth: 70, output: 40 } }),
    ).toMatchObject({ type: "grace", over: "tokens" });
    // The rule it replaces kept 1.5 × the input + 64 and two least answers: 1,000 + 256 + 1,564 + 256 > 2,600, so the grace call alone.
    expect(1000 + MIN_OUTPUT_TOKENS + Math.ceil(1000 * 1.5) + 64 + MIN_OUTPUT_TOKENS).toBeGreaterThan(budget);
  });

  test("a grace turn the history holds is carried on: its call made if it fits, whatever the budgets now say; once answered, the run stops over its budget", () => {
    const p = policy({ max_steps: 5, max_tokens: 100_000 });
    // Steps: 4 of 5 done, the last after a crash that lost the notion of "after tools": the grace call, not a normal one.
    expect(
      p.beforeStep({
        spent: spent({ steps: 4 }),
        inputTokens: 100,
        afterTools: false,
        graceTurn: { over: "steps", answered: false },
      }),
    ).toMatchObject({ type: "grace", over: "steps" });
    expect(
      p.beforeStep({
        spent: spent({ steps: 1 }),
        inputTokens: 100,
        afterTools: false,
        graceTurn: { over: "tokens", answered: false },
      }),
    ).toMatchObject({ type: "grace", over: "tokens" });
    expect(
      p.beforeStep({
        spent: spent({ steps: 2 }),
        inputTokens: 100,
        afterTools: true,
        graceTurn: { over: "steps", answered: true },
      }),
    ).toEqual({ type: "stop", over: "steps" });
    expect(
      p.beforeStep({
        spent: spent({ steps: 2, tokens: 99_990 }),
        inputTokens: 100,
        afterTools: false,
        graceTurn: { over: "cost", answered: false },
      }),
    ).toEqual({ type: "stop", over: "cost" });
  });

  test("graceTurnOf: the grace notice as the last user-role message, answered once an assistant message follows it", () => {
    const user = (text: string, kind?: "notice"): NewMessage => ({
      role: "user",
      ...(kind && { kind }),
      content: [{ type: "text", text }],
    });
    const assistant: NewMessage = {
      role: "assistant",
      content: [{ type: "tool_call", id: "c1", name: "look", input: {} }],
    };
    const result: NewMessage = {
      role: "tool",
      content: [{ type: "tool_result", tool_call_id: "c1", name: "look", content: "x", is_error: false }],
    };
    expect(graceTurnOf([user("Go."), assistant, result, user(graceNotice("steps"), "notice")])).toEqual({
      over: "steps",
      answered: false,
    });
    expect(graceTurnOf([user(graceNotice("cost"), "notice"), assistant, result])).toEqual({
      over: "cost",
      answered: true,
    });
    expect(graceTurnOf([user(graceNotice("tokens"), "notice"), assistant, result, user("And now?")])).toBeNull();
    expect(graceTurnOf([user("Go."), assistant, result, user("Call finish.", "notice")])).toBeNull();
    expect(graceTurnOf([])).toBeNull();
  });

  test("cost: the README's example — 100,000-token calls at $0.30 with max_cost_usd 1.00: a normal call, then the grace call, then stop", () => {
    const p = policy({ max_cost_usd: 1 });
    expect(p.beforeStep({ spent: spent({ costUsd: 0 }), inputTokens: 100_000, afterTools: false })).toMatchObject({
      type: "go",
    });
    expect(
      p.beforeStep({ spent: spent({ costUsd: 0.3, steps: 1 }), inputTokens: 100_000, afterTools: true }),
    ).toMatchObject({ type: "grace", over: "cost" });
    expect(p.beforeStep({ spent: spent({ costUsd: 0.75, steps: 2 }), inputTokens: 100_000, afterTools: true })).toEqual(
      { type: "stop", over: "cost" },
    );
  });

  test("seconds: out of time, the next call is the grace call (it has its window); without grace, stop", () => {
    expect(
      policy({ max_seconds: 10 }).beforeStep({ spent: spent({ timeLeftMs: 0 }), inputTokens: 100, afterTools: true }),
    ).toMatchObject({ type: "grace", over: "seconds" });
    expect(
      policy({ max_seconds: 10, grace_turn: false }).beforeStep({
        spent: spent({ timeLeftMs: -1 }),
        inputTokens: 100,
        afterTools: true,
      }),
    ).toEqual({ type: "stop", over: "seconds" });
  });

  test("a call never asks for less than the least useful answer, nor for more than the request's limit", () => {
    expect(MIN_OUTPUT_TOKENS).toBe(256);
    expect(
      policy({ max_tokens: 1300, grace_turn: false }).beforeStep({
        spent: spent(),
        inputTokens: 1050,
        afterTools: false,
      }),
    ).toEqual({ type: "stop", over: "tokens" });
    // A request limit under 256 is the least itself.
    expect(
      policy({ max_tokens: 1200, grace_turn: false }, 100).beforeStep({
        spent: spent(),
        inputTokens: 1050,
        afterTools: false,
      }),
    ).toEqual({ type: "go", maxTokens: 100 });
  });
});
