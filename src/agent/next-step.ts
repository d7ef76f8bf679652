import type { ModelResponse } from "../core/model-provider.js";
import type { ToolCallBlock } from "../core/messages.js";

import type { RunStopReason } from "../core/run-outcome.js";

/** What the loop does after a model call; decided here, carried out by the loop. */
export type NextStep =
  | { type: "run_tools"; calls: ToolCallBlock[] }
  | { type: "call_model_again" }
  | { type: "finish"; status: "completed" | "incomplete"; stopReason: RunStopReason; unexecuted: ToolCallBlock[] };

export function nextStep(response: ModelResponse): NextStep {
  const calls = response.content.filter((b): b is ToolCallBlock => b.type === "tool_call");
  const finish = (status: "completed" | "incomplete", stopReason: RunStopReason): NextStep =>
    ({ type: "finish", status, stopReason, unexecuted: calls });
  switch (response.stopReason) {
    case "tool_use":
      // A "tool_use" stop without calls is an answer with nothing left to do.
      return calls.length > 0 ? { type: "run_tools", calls } : finish("completed", "end_turn");
    case "end_turn":
      return calls.length > 0 ? { type: "run_tools", calls } : finish("completed", "end_turn");
    case "pause_turn":
      return calls.length > 0 ? { type: "run_tools", calls } : { type: "call_model_again" };
    // Cut-off responses: any tool call in them may be truncated, so it is not run;
    // the loop answers it with an error result to keep the history valid.
    case "max_tokens":
    case "context_window_exceeded":
      return finish("incomplete", "max_tokens");
    case "refusal":
      return finish("incomplete", "refusal");
    case "content_filter":
      return finish("incomplete", "content_filter");
  }
}
