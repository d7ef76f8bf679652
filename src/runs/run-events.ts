import type { AgentEvent } from "../core/agent-events.js";
import type { RunRow } from "../store/schema.js";

/** What a terminal event records of the run as it ended; the rest of the run never changes. */
export type RunState = Pick<RunRow, "status" | "stopReason" | "steps" | "usage" | "error"> & {
  /** The models that answered its steps, when a fallback answered any (absent: the run's own answered every step). */
  modelsUsed?: RunRow["modelsUsed"];
  /** Which budget ended it (absent on events stored before budgets). */
  budgetExceeded?: RunRow["budgetExceeded"];
  /** What a `finish` call reported. */
  result?: RunRow["result"];
  completedAt: string | null;
  /** A pause's: what the run waits on. */
  requiredAction?: RunRow["requiredAction"];
  /** A wait out an outage's (the database's times). */
  wakeAt?: string;
  giveUpAt?: string;
  outageSince?: string;
  outageProbes?: number;
};

export const runStateOf = (row: RunRow): RunState => ({
  status: row.status,
  stopReason: row.stopReason,
  steps: row.steps,
  usage: row.usage,
  error: row.error,
  completedAt: row.completedAt?.toISOString() ?? null,
  budgetExceeded: row.budgetExceeded,
  result: row.result,
  ...(row.modelsUsed && { modelsUsed: row.modelsUsed }),
  ...(row.requiredAction && { requiredAction: row.requiredAction }),
});

/**
 * A run's events as loopd stores them. Events that announce a message refer
 * to it by its `seq` instead of carrying a copy (a tool result would
 * otherwise be written three times), and a `message.created` is not even a
 * row: it is the message's own `event_seq`, read back as an event
 * (`events.after`); nor are a tool call's `tool_call.started` and
 * `tool_call.completed` when they were saved with its result (its
 * `started_event_seq` and `completed_event_seq`, see `numberWrite`). The
 * edge turns them into the contract's shapes
 * (`src/http/present-run-events.ts`).
 */
export type StoredRunEvent =
  | { type: "run.created"; data: { status?: "queued" } }
  /** A queued run starts (`run.created` said `queued`). */
  | { type: "run.started"; data: Record<string, never> }
  | { type: "message.created"; data: { seq: number } }
  | { type: "text.delta"; data: { delta: string } }
  | { type: "tool_call.started"; data: { tool_call_id: string; name: string; input: Record<string, unknown> } }
  | {
      type: "tool_call.completed";
      data: { tool_call_id: string; name: string; is_error: boolean; duration_ms: number; seq: number };
    }
  | { type: "step.restarted"; data: { step: number; reason: string } }
  /** Every model is down: the run parks until a probe (the stream goes on). */
  | { type: "run.waiting"; data: { run: RunState } }
  | { type: "model.retry"; data: Omit<Extract<AgentEvent, { type: "model.retry" }>, "type"> }
  | { type: "model.fallback"; data: Omit<Extract<AgentEvent, { type: "model.fallback" }>, "type"> }
  | { type: "run.action_answered"; data: ActionAnswered }
  | { type: TerminalEventType; data: { run: RunState } };

/** A paused run answered: who decided, and what, call by call (outputs are in the history). */
export type ActionAnswered = {
  actor: string | null;
  approvals: { tool_call_id: string; approve: boolean; reason?: string | undefined }[];
  tool_outputs: { tool_call_id: string; is_error: boolean }[];
};

export type TerminalEventType =
  "run.completed" | "run.incomplete" | "run.failed" | "run.cancelled" | "run.requires_action";

export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set<TerminalEventType>([
  "run.completed",
  "run.incomplete",
  "run.failed",
  "run.cancelled",
  "run.requires_action",
]);

export type RunEventType = StoredRunEvent["type"];
type DataOf<E, T> = E extends { type: infer U; data: infer D } ? (T extends U ? D : never) : never;
export type RunEventData<T extends RunEventType> = DataOf<StoredRunEvent, T>;
