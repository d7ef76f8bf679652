import { expect, test } from "vitest";
import { buildContext } from "../../src/agent/build-context.js";
import type { ContextSettings } from "../../src/core/context-settings.js";
import type { NewMessage } from "../../src/core/messages.js";

const user = (text: string): NewMessage => ({ role: "user", content: [{ type: "text", text }] });
const answer = (text: string): NewMessage => ({ role: "assistant", content: [{ type: "text", text }] });
const SUMMARY: NewMessage = {
  role: "user",
  kind: "summary",
  summarizes: { from_seq: 1, to_seq: 2 },
  content: [{ type: "text", text: "SUMMARY-TEXT of question 1." }],
};

// Written while the conversation was `summarize`; then PATCHed to `trim` or `full` (a conversation's context may change).
const HISTORY: NewMessage[] = [
  user("Question 1?"),
  answer("Answer 1."),
  user("Question 2?"),
  SUMMARY,
  answer("Answer 2."),
  user("Question 3?"),
];

test.each<ContextSettings>([
  { strategy: "trim", keep_tool_results: 4, max_input_tokens: null },
  { strategy: "full", keep_tool_results: 4, max_input_tokens: null },
])(
  "after a switch from summarize to $strategy, a stored summary is not sent as if the user had written it between the messages it condenses",
  (settings) => {
    const { messages } = buildContext({ history: HISTORY, settings });
    // Every message is sent whole under these strategies: the summary of two of them is redundant, and it sits mid-exchange as user text.
    expect(JSON.stringify(messages)).not.toContain("SUMMARY-TEXT");
    expect(messages).toHaveLength(5);
  },
);
