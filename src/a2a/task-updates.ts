import { TaskState, type StreamResponse, type Task, type TaskStatus } from "@a2a-js/sdk";
import { textOf, toolCallsOf } from "../core/messages.js";
import { followRunEvents } from "../runs/follow-run-events.js";
import { TERMINAL_EVENT_TYPES, type RunState } from "../runs/run-events.js";
import type { Services } from "../services.js";
import type { LoggedEvent } from "../store/event-repository.js";
import type { MessageRow, RunRow } from "../store/schema.js";
import {
  agentMessage,
  answerArtifactOf,
  asMessage,
  dataPart,
  loopdMetadataOf,
  statusOf,
  textPart,
} from "./present-task.js";

type FollowServices = Pick<Services, "store" | "signals" | "broadcast" | "exclusiveDatabase">;

export const taskEvent = (task: Task): StreamResponse => ({ payload: { $case: "task", value: task } });

const statusEvent = (run: RunRow, status: TaskStatus, metadata: Record<string, unknown>): StreamResponse => ({
  payload: { $case: "statusUpdate", value: { taskId: run.id, contextId: run.conversationId, status, metadata } },
});

const working = (run: RunRow, event: LoggedEvent, message?: ReturnType<typeof agentMessage>) =>
  statusEvent(
    run,
    { state: TaskState.TASK_STATE_WORKING, message, timestamp: event.createdAt.toISOString() },
    { loopd: { event: event.type, seq: event.seq, ...event.data } },
  );

/** What a step said: its text, and the tools it calls. */
function stepMessage(run: RunRow, m: MessageRow) {
  const text = textOf(asMessage(m));
  const calls = toolCallsOf(asMessage(m)).map((c) => ({ tool_call_id: c.id, name: c.name, input: c.input }));
  const parts = [
    ...(text !== "" ? [textPart(text)] : []),
    ...(calls.length > 0 ? [dataPart({ tool_calls: calls })] : []),
  ];
  return parts.length > 0 ? agentMessage(run, { id: m.id, parts }) : undefined;
}

/** The run as its terminal event recorded it (it may have moved on since: a pause answered). */
const atEnd = (run: RunRow, state: RunState): RunRow => ({
  ...run,
  status: state.status,
  stopReason: state.stopReason,
  steps: state.steps,
  usage: state.usage,
  error: state.error,
  requiredAction: state.requiredAction ?? null,
  result: state.result ?? null,
  completedAt: state.completedAt === null ? null : new Date(state.completedAt),
});

/**
 * A run's stored events after `after` as A2A task updates: a `working`
 * status per step (the model's text and the tools it calls, each tool's
 * end), then at its end the answer as an artifact and the last status
 * (`completed`, `input-required`, `failed`, `canceled`). Read from the
 * run's durable event log, so a caller that lost its stream picks it up
 * again here, on any process. Ends early, without a last status, when
 * `signal` aborts (the caller left, the server stops).
 */
export async function* taskUpdates(
  services: FollowServices,
  { run, after, signal }: { run: RunRow; after: number; signal: AbortSignal },
): AsyncGenerator<StreamResponse> {
  const events = followRunEvents(services, { runId: run.id, conversationId: run.conversationId, after, signal });
  for await (const batch of events) {
    for (const event of batch) {
      if (TERMINAL_EVENT_TYPES.has(event.type)) {
        const ended = atEnd(run, (event.data as { run: RunState }).run);
        const messages = await services.store.messages.ofRun({
          conversationId: run.conversationId,
          runId: run.id,
          firstSeq: run.firstSeq,
        });
        const artifact = answerArtifactOf(ended, messages);
        if (artifact)
          yield {
            payload: {
              $case: "artifactUpdate",
              value: {
                taskId: run.id,
                contextId: run.conversationId,
                artifact,
                append: false,
                lastChunk: true,
                metadata: undefined,
              },
            },
          };
        yield statusEvent(ended, statusOf(ended, messages), loopdMetadataOf(ended));
        return;
      }
      switch (event.type) {
        case "message.created": {
          const seq = (event.data as { seq: number }).seq;
          const message = event.message ?? (await services.store.messages.bySeqs(run.conversationId, [seq]))[0];
          if (message?.role === "assistant") yield working(run, event, stepMessage(run, message));
          break;
        }
        case "run.started":
        case "run.action_answered":
        case "tool_call.completed":
        case "step.restarted":
          yield working(run, event);
          break;
      }
    }
  }
}
