import type { ToolCallBlock } from "../core/messages.js";
import type { ModelResponse, ToolChoice } from "../core/model-provider.js";
import type { PendingToolCall, RunEnding, RunResult } from "../core/run-outcome.js";
import type { ToolBox } from "../tools/tool-box.js";
import type { FinishChecker } from "./finish-tool.js";
import type { PreparedStep } from "./prepare-step.js";

/** What the loop does after a model call: decided here, from the answer alone; carried out by the loop. */
export type Turn =
  /** An answer that is not done yet and asks for nothing (Anthropic's `pause_turn`). */
  | { type: "call_again" }
  /** The run is to end with a `finish` call and the model answered in text: one nudge. */
  | { type: "nudge_finish" }
  /** The run ends; the answer's calls (cut off, or after the budget ran out) are answered without running, saying why. */
  | { type: "end"; ending: RunEnding; unexecuted: ToolCallBlock[]; why: string }
  /** A valid `finish` call ends the run with its result; the step's other calls do not run. */
  | { type: "finish"; result: RunResult; call: ToolCallBlock; calls: ToolCallBlock[] }
  /**
   * The step's calls, each through the tool box's decision: those that may
   * run, `finish` calls refused with what is wrong (and calls to tools the
   * turn's tool choice did not offer, refused as such), and those that wait for
   * the application (the run pauses once the others are done).
   */
  | {
      type: "run_tools";
      run: ToolCallBlock[];
      refused: { call: ToolCallBlock; message: string }[];
      waiting: PendingToolCall[];
    };

export async function decideTurn(
  response: ModelResponse,
  {
    step,
    toolBox,
    checkFinish,
    nudged,
  }: { step: PreparedStep; toolBox: ToolBox; checkFinish: FinishChecker | null; nudged: () => boolean },
): Promise<Turn> {
  const calls = response.content.filter((b): b is ToolCallBlock => b.type === "tool_call");
  if (step.grace) {
    const { over } = step.grace;
    const ending: RunEnding = {
      status: "incomplete",
      stopReason: over === "steps" ? "max_steps" : "budget",
      budgetExceeded: over,
    };
    return { type: "end", ending, unexecuted: calls, why: "tool call was not executed: the run's budget ran out" };
  }
  const cutOff = (stopReason: "max_tokens" | "refusal" | "content_filter"): Turn => ({
    type: "end",
    ending: { status: "incomplete", stopReason },
    unexecuted: calls,
    // Any tool call in a cut-off answer may be truncated, so it is not run.
    why: `tool call was not executed: the response stopped early (${stopReason}), so its arguments may be incomplete`,
  });
  switch (response.stopReason) {
    case "max_tokens":
    case "context_window_exceeded":
      return cutOff("max_tokens");
    case "refusal":
    case "content_filter":
      return cutOff(response.stopReason);
    case "pause_turn":
      return calls.length > 0
        ? toolsTurn(calls, { toolBox, checkFinish, choice: step.request.toolChoice })
        : { type: "call_again" };
    case "tool_use":
    case "end_turn":
      if (calls.length > 0) return toolsTurn(calls, { toolBox, checkFinish, choice: step.request.toolChoice });
      // Asked to finish with a call, the model answered in text: one nudge, then its next plain answer ends the run.
      if (checkFinish && !nudged()) return { type: "nudge_finish" };
      return {
        type: "end",
        ending: { status: "completed", stopReason: "end_turn", result: null },
        unexecuted: [],
        why: "",
      };
  }
}

/** The result of a call to a tool the turn's `tool_choice` did not offer. */
export const NOT_OFFERED_RESULT = "tool call was not executed: tools were not offered on this turn";

/**
 * Whether a tool was offered on a turn: `none` offers none, a named tool only
 * itself. A server that does not hold to the choice (or a model talked into
 * calling anyway) gets no further than this.
 */
const offeredBy = (choice: ToolChoice) => (name: string) =>
  choice !== "none" && (typeof choice !== "object" || choice.name === name);

/**
 * Every call through the same decision, whatever else the step holds; a call
 * to a tool the turn did not offer is refused first, before it could run,
 * wait for the application or finish the run.
 */
async function toolsTurn(
  all: ToolCallBlock[],
  { toolBox, checkFinish, choice }: { toolBox: ToolBox; checkFinish: FinishChecker | null; choice: ToolChoice },
): Promise<Turn> {
  const offered = offeredBy(choice);
  const calls = all.filter((call) => offered(call.name));
  const notOffered = all
    .filter((call) => !offered(call.name))
    .map((call) => ({ call, message: notOfferedResult(choice) }));
  const decided = calls.map((call) => ({ call, decision: toolBox.decide(call) }));
  const finishing = [];
  for (const { call } of decided.filter((d) => d.decision === "loop"))
    finishing.push({ call, verdict: await checkFinish?.(call.input) });
  const valid = finishing.find((f) => f.verdict?.ok === true);
  if (valid && valid.verdict?.ok) return { type: "finish", result: valid.verdict.result, call: valid.call, calls: all };
  return {
    type: "run_tools",
    run: decided.filter((d) => d.decision === "run").map((d) => d.call),
    refused: [
      ...notOffered,
      ...finishing.map(({ call, verdict }) => ({
        call,
        message: verdict && !verdict.ok ? verdict.message : "finish is not offered in this run",
      })),
    ],
    waiting: decided.flatMap(({ call, decision }): PendingToolCall[] =>
      decision === "approve" || decision === "submit_output"
        ? [{ tool_call_id: call.id, name: call.name, input: call.input, action: decision }]
        : [],
    ),
  };
}

const notOfferedResult = (choice: ToolChoice) =>
  typeof choice === "object" ? `${NOT_OFFERED_RESULT} (only ${choice.name} was)` : NOT_OFFERED_RESULT;
