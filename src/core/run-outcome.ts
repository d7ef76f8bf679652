import type { NewMessage } from "./messages.js";
import type { RunUsage } from "./usage.js";

/** The budget that ended a run. */
export type BudgetName = "steps" | "tokens" | "seconds" | "cost";

/** What a valid `finish` call reported. */
export interface RunResult {
  summary: string;
  confidence: number | null;
  result: unknown;
}

/** What happens to a proposed call: it runs now, or it waits for the application. */
export type ToolAction = "run" | "approve" | "submit_output";

/** A call a paused run waits on, and what the application must do about it. */
export interface PendingToolCall {
  tool_call_id: string;
  name: string;
  input: Record<string, unknown>;
  action: Exclude<ToolAction, "run">;
}

/** A tool call's end, as its `tool_call.completed` event tells it. */
export interface ToolCallCompletion {
  tool_call_id: string;
  name: string;
  is_error: boolean;
  duration_ms: number;
  /** How the call ended (for the trace). */
  status?: "ok" | "error" | "timeout" | "cancelled";
}

export interface RunError {
  code: string;
  message: string;
}

/** How a run ended, or why it waits: one member per status, each with the fields that status has. */
export type RunEnding =
  | { status: "completed"; stopReason: "end_turn" | "finish"; result: RunResult | null }
  | { status: "incomplete"; stopReason: "max_steps" | "budget"; budgetExceeded: BudgetName }
  | { status: "incomplete"; stopReason: "max_tokens" | "refusal" | "content_filter" }
  | { status: "incomplete"; stopReason: "action_expired" | "superseded" }
  | { status: "failed"; stopReason: "error"; error: RunError }
  | { status: "cancelled"; stopReason: "cancelled" | "superseded" }
  | { status: "requires_action"; stopReason: null; pending: PendingToolCall[] };

export type RunStatus = RunEnding["status"];
/** The contract's stop reasons (null while running or waiting). */
export type RunStopReason = NonNullable<RunEnding["stopReason"]>;

/** A run's execution as the loop ends it: how, and what it had spent. */
export type RunOutcome = RunEnding & {
  steps: number;
  usage: RunUsage;
  /** The history as it stands at the end, `unsaved` included. */
  history?: NewMessage[];
  /** The end of the history nothing acted on (the last answer, the results that close a run): saved with the run's end. */
  unsaved?: NewMessage[];
};

/** Whether a run ended on a turn the provider refused: its messages are marked as the run ends (by `loopd_save`), and never sent again. */
export const endsRefused = (stopReason: string | null): boolean =>
  stopReason === "refusal" || stopReason === "content_filter";

/** The fields of an ending, each present (null where the status has none): what the store and the events record. */
export function endingFields(ending: RunEnding) {
  return {
    status: ending.status,
    stopReason: ending.stopReason,
    error: "error" in ending ? ending.error : null,
    budgetExceeded: "budgetExceeded" in ending ? ending.budgetExceeded : null,
    result: "result" in ending ? ending.result : null,
    pending: "pending" in ending ? ending.pending : null,
  };
}
