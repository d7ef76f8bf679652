import { errorResultFor } from "../core/history.js";
import { ownCallsOf } from "../core/run-outcome.js";
import { runEndSpan } from "./trace/run-tracer.js";
import type { Repositories } from "../store/store.js";
import type { RunRow } from "../store/schema.js";
import { createRunAppender, positionOf } from "./run-numbering.js";
import { runStateOf } from "./run-events.js";

export const EXPIRED_RESULT = "not executed: no answer in time";
export const SUPERSEDED_RESULT = "not executed: the user sent a new message instead";
export const CANCELLED_WAITING_RESULT = "cancelled: the run was cancelled while this call waited for the user";

/** How a paused run ends without going on, and what its pending calls are answered with. */
export type WaitingRunEnd =
  | { status: "incomplete"; stopReason: "action_expired"; content: typeof EXPIRED_RESULT }
  | { status: "incomplete"; stopReason: "superseded"; content: typeof SUPERSEDED_RESULT }
  | { status: "cancelled"; stopReason: "cancelled"; content: typeof CANCELLED_WAITING_RESULT }
  | { status: "cancelled"; stopReason: "superseded"; content: typeof SUPERSEDED_RESULT };

export const EXPIRED: WaitingRunEnd = { status: "incomplete", stopReason: "action_expired", content: EXPIRED_RESULT };
export const SUPERSEDED: WaitingRunEnd = { status: "incomplete", stopReason: "superseded", content: SUPERSEDED_RESULT };
/** A run waiting out an outage that a new message interrupts (`on_busy: "interrupt"`): as a running run would, it ends cancelled. */
export const INTERRUPTED_WAITING: WaitingRunEnd = {
  status: "cancelled",
  stopReason: "superseded",
  content: SUPERSEDED_RESULT,
};
export const CANCELLED_WAITING: WaitingRunEnd = {
  status: "cancelled",
  stopReason: "cancelled",
  content: CANCELLED_WAITING_RESULT,
};

/**
 * Ends a paused run, or one waiting out an outage (which has no pending
 * call), in the caller's transaction and with its row locked
 * (`runs.lockWaiting`, `runs.lockParked`): each pending call gets an error result saying why
 * it never ran, so the history stays valid, then the run's end and its
 * terminal event. Nothing is left half done: either all of it commits, or
 * the run still waits.
 */
export async function closeWaitingRun(tx: Repositories, run: RunRow, end: WaitingRunEnd): Promise<RunRow> {
  const pending = ownCallsOf(run.requiredAction?.tool_calls ?? []);
  const results = pending.map((call) =>
    errorResultFor({ type: "tool_call", id: call.tool_call_id, name: call.name, input: call.input }, end.content),
  );
  const appender = createRunAppender(tx, run, await positionOf(tx, run));
  await appender.toolResults(results, { sourceOf: () => "loopd" });
  const ended = await tx.runs.endWaiting(run.id, { status: end.status, stopReason: end.stopReason });
  await appender.event(`run.${end.status}`, { run: runStateOf(ended) });
  await tx.traces.append(
    run.id,
    [
      runEndSpan({
        status: ended.status,
        stop_reason: ended.stopReason,
        error: null,
        budget_exceeded: null,
        result: null,
        steps: ended.steps,
        usage: ended.usage,
        completed_at: ended.completedAt?.toISOString() ?? null,
      }),
    ],
    { nextMessageSeq: appender.position.nextMessageSeq },
  );
  await tx.notify("loopd_run_events", run.id);
  return ended;
}
