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
  /**
   * A call a child agent's run waits on (its own `tool_call_id`), shown on
   * the parent that called it: the answer given on the parent is carried to
   * the child, and the parent's call (`tool_call_id` here) runs again to
   * wait for the child's end. Absent: a call of the run itself.
   */
  via?: ChildRunRef & { tool_call_id: string; name: string };
}

/**
 * The run's own calls a pause holds unanswered: its pending calls, and for
 * the calls a child run waits on, the run's call of that child (once each).
 * What ends a pause without going on answers these.
 */
export function ownCallsOf(
  pending: readonly PendingToolCall[],
): Array<Pick<PendingToolCall, "tool_call_id" | "name" | "input">> {
  const own = pending.filter((p) => !p.via);
  const viaCalls = new Map(
    pending.flatMap((p) =>
      p.via ? [[p.via.tool_call_id, { tool_call_id: p.via.tool_call_id, name: p.via.name, input: {} }] as const] : [],
    ),
  );
  return [...own, ...viaCalls.values()];
}

/** A run another run's call of an agent started (`agent__<name>`), in its own conversation. */
export interface ChildRunRef {
  conversation_id: string;
  run_id: string;
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

/**
 * A run parked because every model is down (`on_provider_outage: "wait"`):
 * when it is probed next and when it gives up (from now), since when it
 * waits out this outage (null: from now on) and how many times it parked in it.
 */
export interface OutageWait {
  wakeInMs: number;
  giveUpInMs: number;
  since: string | null;
  probes: number;
}

/** How a run ended, or why it waits: one member per status, each with the fields that status has. */
export type RunEnding =
  | { status: "completed"; stopReason: "end_turn" | "finish"; result: RunResult | null }
  | { status: "incomplete"; stopReason: "max_steps" | "budget"; budgetExceeded: BudgetName }
  | { status: "incomplete"; stopReason: "max_tokens" | "refusal" | "content_filter" }
  | { status: "incomplete"; stopReason: "action_expired" | "superseded" }
  | { status: "failed"; stopReason: "error"; error: RunError }
  | { status: "cancelled"; stopReason: "cancelled" | "superseded" }
  | { status: "requires_action"; stopReason: null; pending: PendingToolCall[] }
  | { status: "waiting"; stopReason: null; error: RunError; outage: OutageWait };

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
    outage: "outage" in ending ? ending.outage : null,
  };
}

/**
 * Commits messages at the end of the history; resolves once they are
 * durable. `completed` announces the tool calls whose results they hold, in
 * the same write; `soon`: they go with the next write instead, and it
 * resolves before they are durable.
 */
export type SaveMessages = (
  messages: NewMessage[],
  options?: { completed?: ToolCallCompletion[]; soon?: boolean },
) => Promise<void>;
