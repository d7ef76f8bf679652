import { toolCallsOf, type NewMessage, type ToolResultBlock } from "../core/messages.js";
import { CANCELLED_RESULT, findOrphanToolCalls, INTERRUPTED_RESULT, repairMessages } from "../core/history.js";
import type { PendingToolCall } from "../core/run-outcome.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import { historyOf } from "../store/message-repository.js";
import { positionOf } from "./run-numbering.js";
import { createRunWriter, type RunWriter } from "./run-writer.js";
import { toolBoxOf } from "../tools/tool-box-of.js";
import { calledAgentOf } from "../tools/agent-tools.js";
import { loopToolsOf } from "../agent/finish-tool.js";
import type { RunStart } from "./start-run.js";
import { INTERNAL } from "../store/conversation-repository.js";

/**
 * Carries on a run whose process stopped (crashed, or shut down before it
 * finished), now that this process holds its lease. One policy whatever the
 * cause: a tool call cut off mid-way is answered "interrupted: it may or may
 * not have taken effect" (and announced with its `tool_call.completed`), and
 * the run resumes from its last saved step, so the model decides what to do
 * about it. A call that waits for the application (approval, a client's
 * output) never ran: the run pauses for it, as its step would have. A call
 * the application approved that never began runs. A run whose client asked
 * to cancel ends cancelled; one whose answer was saved but not its end is
 * ended.
 */
export async function recoverRun({
  services,
  run,
  launch,
}: {
  services: Services;
  run: RunRow;
  /** Executes the run from its saved state with this writer (running the approved calls first). */
  launch: (start: RunStart, writer: RunWriter) => void;
}): Promise<void> {
  const { store, log } = services;
  // Every model call is preceded by a repair, so an unanswered call can only be in this tail.
  const rows = await store.messages.sinceLastAssistant(run.conversationId);
  const tail = historyOf(rows);
  const writer = createRunWriter({ services, run, position: await positionOf(store, run) });
  // Calls approved by the application that never began (the process stopped first) still run;
  // those that began are answered "interrupted" below, like any call cut off: never put up for approval again.
  const { decided, approved } = run.cancelRequested
    ? { decided: new Set<string>(), approved: new Set<string>() }
    : await approvedCalls(services, run);
  // A call that waits for the application never ran without its answer: it still waits (the step paused too late).
  const conversation = await store.conversations.get(INTERNAL, run.conversationId);
  if (!conversation) return; // deleted meanwhile: its runs went with it
  const toolBox = toolBoxOf({
    registry: services.registry,
    settings: services.config.tools,
    conversation,
    loopTools: loopToolsOf(run.request.finish ?? null),
    runId: run.id,
  });
  // A call of an agent cut off runs again: it finds the child it started (never a second one) and waits for its end.
  if (!run.cancelRequested)
    for (const call of findOrphanToolCalls(tail))
      if (calledAgentOf(call.name, conversation.agents) !== null) approved.add(call.id);
  const waiting = run.cancelRequested
    ? []
    : findOrphanToolCalls(tail).flatMap((call): PendingToolCall[] => {
        const decision = decided.has(call.id) ? "run" : toolBox.decide(call);
        return decision === "approve" || decision === "submit_output"
          ? [{ tool_call_id: call.id, name: call.name, input: call.input, action: decision }]
          : [];
      });
  const untouched = new Set([...approved, ...waiting.map((w) => w.tool_call_id)]);
  const repairs = repairMessages(tail, run.cancelRequested ? CANCELLED_RESULT : INTERRUPTED_RESULT).filter(
    (m) => !(m.role === "tool" && untouched.has(m.content[0].tool_call_id)),
  );
  writer.trace({
    type: "run.recovered",
    data: {
      steps: run.steps,
      interrupted_calls: repairs.length,
      approved_not_started: approved.size,
      cancel_requested: run.cancelRequested,
    },
  });
  if (repairs.length > 0) {
    const completed = (repairs as (NewMessage & { content: [ToolResultBlock] })[]).map(({ content: [result] }) => ({
      tool_call_id: result.tool_call_id,
      name: result.name,
      is_error: true,
      duration_ms: 0,
    }));
    await writer.save(repairs, { completed });
  }
  if (run.cancelRequested) return writer.finish({ status: "cancelled", stopReason: "cancelled" });
  if (approved.size === 0 && waiting.length > 0) {
    log.info({ run_id: run.id, waiting: waiting.length }, "a run stopped before its pause was recorded: it pauses now");
    return writer.finish(
      { status: "requires_action", stopReason: null, pending: waiting },
      { actionTimeoutS: conversation.actionTimeoutS ?? services.config.runs.actionTimeoutS },
    );
  }

  const last = tail.at(-1);
  if (approved.size > 0) {
    log.info({ run_id: run.id, approved_calls: approved.size }, "resuming an answered run: its approved calls run now");
    return launch({ kind: "recovered", run, approvedCalls: [...approved] }, writer);
  }
  if (repairs.length === 0 && last?.role === "assistant" && toolCallsOf(last).length === 0) {
    return writer.finish({ status: "completed", stopReason: "end_turn", result: null });
  }
  if (repairs.length === 0) {
    // A model call was cut off: the text it streamed is in the log already;
    // this tells readers to drop it, as the model is called again.
    writer.emit("step.restarted", {
      step: run.steps + 1,
      reason: "the process running this step stopped; the model is called again",
    });
  }
  log.info(
    { run_id: run.id, steps: run.steps, interrupted_calls: repairs.length },
    "resuming a run after its process stopped",
  );
  launch({ kind: "recovered", run, approvedCalls: [] }, writer);
}

/**
 * The calls the run's last answer approved (`decided`), and of them those
 * that have not begun (`approved`): no `tool_call.started` since the answer
 * (it is saved before an approved call runs), and no result.
 */
async function approvedCalls(
  { store }: Services,
  run: RunRow,
): Promise<{ decided: Set<string>; approved: Set<string> }> {
  const answer = await store.actions.latestOf(run.id);
  const decided = new Set(answer?.answer.approvals.filter((a) => a.approve).map((a) => a.tool_call_id) ?? []);
  const approved = new Set(decided);
  if (!answer || approved.size === 0) return { decided, approved };
  for (const event of await store.events.after({ runId: run.id, afterSeq: answer.afterEventSeq, limit: 10_000 })) {
    if (event.type === "tool_call.started" || event.type === "tool_call.completed")
      approved.delete((event.data as { tool_call_id: string }).tool_call_id);
  }
  return { decided, approved };
}
