import { expect, test } from "vitest";
import { scoreEvalCase, type EvalOutcome } from "../../src/evals/score-eval-case.js";

const run = (over: Partial<EvalOutcome> = {}): EvalOutcome => ({
  status: "completed",
  stop_reason: "end_turn",
  error: null,
  steps: 2,
  cost_usd: 0.002,
  tool_calls: ["calculate"],
  final_text: "6*7 is 42.",
  result: null,
  ...over,
});

test("a run that does what the case expects passes", async () => {
  expect(
    await scoreEvalCase(
      {
        tool_calls: ["calculate"],
        final_text: { contains: "42", regex: "\\b42\\.$" },
        max_steps: 2,
        max_cost_usd: 0.002,
      },
      run(),
    ),
  ).toEqual([]);
});

test("each broken expectation is one line that says what", async () => {
  const failures = await scoreEvalCase(
    {
      tool_calls: ["calculate", "calculate"],
      final_text: { contains: "forty-two", regex: "^\\d+$" },
      max_steps: 1,
      max_cost_usd: 0.001,
    },
    run(),
  );
  expect(failures).toEqual([
    "tool_calls: expected [calculate, calculate], got [calculate]",
    'final_text: does not contain "forty-two" (it is "6*7 is 42.")',
    'final_text: does not match /^\\d+$/ (it is "6*7 is 42.")',
    "max_steps: 2 steps, more than 1",
    "max_cost_usd: $0.002, more than $0.001",
  ]);
});

test("the same tools in another order fail tool_calls", async () => {
  expect(await scoreEvalCase({ tool_calls: ["a", "b"] }, run({ tool_calls: ["b", "a"] }))).toEqual([
    "tool_calls: expected [a, b], got [b, a]",
  ]);
});

test("a pattern that backtracks for ever in JavaScript is matched in linear time (RE2)", async () => {
  const started = performance.now();
  const failures = await scoreEvalCase(
    { tool_calls: ["calculate"], final_text: { regex: "^(a+)+$" } },
    run({ final_text: `${"a".repeat(5000)}!` }),
  );
  expect(failures).toEqual([expect.stringMatching(/^final_text: does not match \/\^\(a\+\)\+\$\//)]);
  expect(performance.now() - started).toBeLessThan(2000);
});

test("finish_result: the run's finish result against the schema; no finish call fails it", async () => {
  const schema = { type: "object", properties: { answer: { type: "number" } }, required: ["answer"] };
  expect(
    await scoreEvalCase(
      { tool_calls: [], finish_result: schema },
      run({ tool_calls: [], result: { result: { answer: 42 } } }),
    ),
  ).toEqual([]);
  expect(
    await scoreEvalCase(
      { tool_calls: [], finish_result: schema },
      run({ tool_calls: [], result: { result: { answer: "42" } } }),
    ),
  ).toEqual(["finish_result: result.answer must be number"]);
  expect(await scoreEvalCase({ tool_calls: [], finish_result: schema }, run({ tool_calls: [] }))).toEqual([
    "finish_result: the run did not end with a finish call",
  ]);
});

test("a failed run fails, and a cost limit on a model without a price cannot be met", async () => {
  expect(
    await scoreEvalCase(
      { tool_calls: [], max_cost_usd: 1 },
      run({
        status: "failed",
        tool_calls: [],
        cost_usd: null,
        error: { code: "provider_error", message: "401 invalid x-api-key" },
      }),
    ),
  ).toEqual(["run: ended failed: 401 invalid x-api-key", "max_cost_usd: the cost is unknown (the model has no price)"]);
});
