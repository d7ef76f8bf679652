import type { NewMessage } from "../core/messages.js";
import { ownCallsOf } from "../core/run-outcome.js";
import { AppError } from "../errors.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import { redactorOf } from "../util/redact.js";
import { closeWaitingRun, EXPIRED } from "./close-waiting-run.js";
import type { ActionAnswered } from "./run-events.js";
import { createRunAppender, positionOf } from "./run-numbering.js";

/** An answer to a paused run, as the application gave it; its results are worked out under the run's lock. */
export interface PausedRunAnswer {
  actor: string | null;
  approvals: ActionAnswered["approvals"];
  /** The client tools' outputs (their content is in the results). */
  toolOutputs: ActionAnswered["tool_outputs"];
  idempotencyKey: string | null;
  requestHash: string;
  /** The answer checked against the run's pending calls, and their results (denials, outputs) in the model's order. */
  resultsOf: (waiting: RunRow) => NewMessage[];
}

/**
 * Saves an answer to a paused run, in one transaction under the run's lock:
 * the calls' results, the decisions (an event and an audit row), and the run
 * running again under this process's lease. A run no longer waiting is a 409
 * `run_not_waiting`; one past its deadline is closed as expired ("expired").
 */
export async function answerPausedRun(services: Services, runId: string, answer: PausedRunAnswer) {
  const { store, config, instanceId } = services;
  const trace = config.trace.enabled;
  const redactor = redactorOf(config);
  return store.transaction(async (tx) => {
    const waiting = await tx.runs.lockWaiting(runId);
    if (!waiting) throw new AppError("run_not_waiting", `run ${runId} is not waiting for an answer`, { run_id: runId });
    // Past its deadline, the calls were given up, whether or not the sweeper has been round yet.
    if (await tx.runs.lockWaiting(runId, { overdue: true })) {
      await closeWaitingRun(tx, waiting, EXPIRED);
      return "expired" as const;
    }
    const results = answer.resultsOf(waiting);
    const decisions: ActionAnswered = {
      actor: answer.actor,
      approvals: answer.approvals.map(({ tool_call_id, approve, reason }) => ({
        tool_call_id,
        approve,
        ...(reason !== undefined && { reason }),
      })),
      tool_outputs: answer.toolOutputs.map(({ tool_call_id, is_error }) => ({ tool_call_id, is_error })),
    };
    const outputs = new Set(answer.toolOutputs.map((o) => o.tool_call_id));
    const appender = createRunAppender(tx, waiting, await positionOf(tx, waiting));
    const afterEventSeq = appender.position.lastSeq;
    await appender.event("run.action_answered", decisions);
    const firstMessageSeq = await appender.toolResults(results, {
      sourceOf: trace ? (result) => (outputs.has(result.tool_call_id) ? "client" : "declined") : undefined,
    });
    // Before the results' spans (each on its message).
    if (trace)
      await tx.traces.append(waiting.id, [{ type: "action.answered", data: redactor.value({ ...decisions }) }], {
        nextMessageSeq: firstMessageSeq,
      });
    const run = await tx.runs.resume(waiting.id, { owner: instanceId, leaseMs: config.runs.leaseMs });
    await tx.actions.insert({
      runId: waiting.id,
      actor: decisions.actor,
      answer: { approvals: decisions.approvals, tool_outputs: decisions.tool_outputs },
      idempotencyKey: answer.idempotencyKey,
      requestHash: answer.requestHash,
      afterEventSeq,
      firstMessageSeq,
    });
    await tx.notify("loopd_run_events", waiting.id);
    return {
      run,
      afterEventSeq,
      firstMessageSeq,
      position: appender.position,
      approvedCalls: callsToRun(waiting, answer),
    };
  });
}

/** The calls that run once the run goes on: its own the answer approved, and its calls of child runs that waited (each goes back to waiting for its child, which has its answer). */
function callsToRun(waiting: RunRow, answer: PausedRunAnswer): string[] {
  const pending = waiting.requiredAction?.tool_calls ?? [];
  const ofChildren = new Set(pending.flatMap((p) => (p.via ? [p.tool_call_id] : [])));
  const approved = answer.approvals
    .filter((a) => a.approve && !ofChildren.has(a.tool_call_id))
    .map((a) => a.tool_call_id);
  const childCalls = ownCallsOf(pending.filter((p) => p.via)).map((c) => c.tool_call_id);
  return [...approved, ...childCalls];
}
