import { expect, test } from "vitest";
import type { EvalCase } from "../../src/evals/eval-case.js";
import { runEvals } from "../../src/evals/run-evals.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { evalTools, recordCase } from "./eval-fixtures.js";

const f = useLoopd({ tools: evalTools() });

const text = (t: string) => [{ type: "text", text: t }];
const call = (id: string) => ({
  role: "assistant",
  content: [{ type: "tool_call", id, name: "lookup_order", input: { number: id } }],
});
const result = (id: string) => ({
  role: "tool",
  content: [
    { type: "tool_result", tool_call_id: id, name: "lookup_order", content: `order ${id} shipped`, is_error: false },
  ],
});

/**
 * A case's history as a conversation's is: a refused turn (seq 3–4, kept, `excluded`) and, later, a summary of
 * seq 1–9 written by a `summarize` run mid-exchange (seq 13). The summary's range is in the history's seqs.
 */
const HISTORY = [
  { role: "user", content: text("Question 1?") }, // 1
  { role: "assistant", content: text("Answer 1.") }, // 2
  { role: "user", content: text("Something refused?"), excluded: "refusal" }, // 3
  { role: "assistant", content: text("I can't."), excluded: "refusal" }, // 4
  { role: "user", content: text("Question 3?") }, // 5
  call("toolu_a"), // 6
  result("toolu_a"), // 7
  { role: "user", content: text("Question 4?") }, // 8
  { role: "assistant", content: text("Answer 4.") }, // 9
  { role: "user", content: text("Question 5?") }, // 10
  call("toolu_b"), // 11
  result("toolu_b"), // 12
  {
    role: "user",
    kind: "summary",
    summarizes: { from_seq: 1, to_seq: 9 },
    content: text("Summary: questions 1, 3 and 4 were answered."),
  }, // 13
  { role: "assistant", content: text("Answer 5.") }, // 14
];

test("an eval case whose history holds a refused turn before a summary sends the model a valid history: no tool result without its call, the messages after the summary all sent", async () => {
  const { evalCase } = await recordCase(f, {
    provider: "anthropic",
    content: "Question 0?",
    turns: [{ text: "Answer 0." }],
  });
  const withSummary: EvalCase = {
    ...evalCase,
    conversation: {
      ...evalCase.conversation,
      context: { strategy: "summarize", keep_tool_results: 4, max_input_tokens: 100_000 },
    },
    history: HISTORY as EvalCase["history"],
    input: text("Question 6?") as EvalCase["input"],
    recorded: [],
    expect: { tool_calls: [] },
  };
  f.llm.script({ text: "Answer 6." });
  const { results } = await runEvals({
    cases: [{ file: "case.json", evalCase: withSummary }],
    config: f.loopd.config,
    providers: f.loopd.services.providers,
    tools: evalTools(),
  });
  expect(results[0], JSON.stringify(results[0])).toMatchObject({ status: "completed" });
  const sent = JSON.stringify(f.llm.requests[0]!.body.messages);
  // Seq 10–12 come after what the summary covers: the question, the call and its result are sent, in that order.
  expect(sent).toContain("Question 5?");
  expect(sent.indexOf('"id":"toolu_b"')).toBeGreaterThan(-1);
  expect(sent.indexOf('"id":"toolu_b"')).toBeLessThan(sent.indexOf('"tool_use_id":"toolu_b"'));
  // And what it covers is not sent again.
  expect(sent).not.toContain("Question 4?");
});
