import type { AgentEvent } from "../core/agent-events.js";
import { isInterruption, isSuperseded } from "../core/interruptions.js";
import type { ToolCallBlock } from "../core/messages.js";
import type { PendingToolCall } from "../core/run-outcome.js";
import type { ToolBox } from "../tools/tool-box.js";
import { INTERRUPTED_RESULT, SUPERSEDED_CALL_RESULT } from "../core/history.js";
import type { RunClock } from "./run-clock.js";
import type { RunState } from "./run-state.js";
import { TIME_BUDGET_RESULT } from "./budget-conditions.js";

/**
 * Runs the calls a turn said to run, through the tool box, each result saved
 * (with its `tool_call.completed`) the moment it exists. The run's time
 * budget stops a call in flight at its deadline, as does the run's signal.
 * `announced`: the calls' `tool_call.started` was written already (approved
 * calls, announced durably before they run). Returns the calls the run must
 * wait on before those calls have a result (a child run's, paused): their
 * calls stay unanswered, and run again once the application has answered.
 * A call that spent tokens of its own (a child run) adds them to the run's
 * usage, saved with its result.
 */
export async function runTools(
  calls: ToolCallBlock[],
  {
    toolBox,
    state,
    clock,
    signal,
    emit,
    announced = false,
  }: {
    toolBox: ToolBox;
    state: RunState;
    clock: RunClock;
    signal: AbortSignal | undefined;
    emit: (event: AgentEvent) => void;
    announced?: boolean;
  },
): Promise<PendingToolCall[]> {
  const waits: PendingToolCall[] = [];
  if (calls.length === 0) return waits;
  const stop = clock.toolSignal(signal);
  try {
    const outcomes = toolBox.run(calls, {
      signal: stop.signal,
      onStart: announced
        ? undefined
        : (call) => emit({ type: "tool_call.started", tool_call_id: call.id, name: call.name, input: call.input }),
    });
    for await (const outcome of outcomes) {
      const { call, durationMs, status } = outcome;
      // A call cut short by a shutdown was not cancelled by anyone: say so, for the model that resumes.
      const stoppedBy =
        status !== "cancelled"
          ? null
          : isInterruption(signal)
            ? INTERRUPTED_RESULT
            : isSuperseded(signal)
              ? SUPERSEDED_CALL_RESULT
              : stop.outOfTime()
                ? TIME_BUDGET_RESULT
                : null;
      if (outcome.waiting && status === "ok") {
        waits.push(...outcome.waiting);
        continue;
      }
      if (outcome.spent) {
        state.addSpent(outcome.spent);
        emit({ type: "usage.added", tool_call_id: call.id, run_steps: state.steps, run_usage: state.usage });
      }
      const result = stoppedBy ? { ...outcome.result, content: stoppedBy } : outcome.result;
      await state.append([{ role: "tool", content: [result] }], {
        completed: [
          { tool_call_id: call.id, name: call.name, is_error: result.is_error, duration_ms: durationMs, status },
        ],
      });
      emit({
        type: "tool_call.completed",
        tool_call_id: call.id,
        name: call.name,
        input: call.input,
        is_error: result.is_error,
        content: result.content,
        duration_ms: durationMs,
        status,
      });
    }
  } finally {
    stop.dispose();
  }
  return waits;
}

/** A paused run answered: the calls the application approved (`approved`, their ids) run first, announced durably before they do. */
export async function runApprovedCalls(
  approved: readonly string[],
  { flushEvents, ...context }: Parameters<typeof runTools>[1] & { flushEvents?: (() => Promise<void>) | undefined },
): Promise<PendingToolCall[]> {
  const calls = context.state.lastCalls().filter((call) => approved.includes(call.id));
  for (const call of calls)
    context.emit({ type: "tool_call.started", tool_call_id: call.id, name: call.name, input: call.input });
  if (calls.length > 0) await flushEvents?.();
  return runTools(calls, { ...context, announced: true });
}
