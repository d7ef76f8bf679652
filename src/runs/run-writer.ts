import type { NewMessage, ToolResultBlock, Usage } from "../agent/messages.js";
import type { AgentRunResult } from "../agent/run-agent-loop.js";
import { describeError } from "../errors.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import { createRunEventLog, LeaseLost } from "./run-event-log.js";
import { runStateOf } from "./run-events.js";

export type RunEnd = Pick<AgentRunResult, "status" | "stopReason" | "error"> & Partial<Pick<AgentRunResult, "steps" | "usage">>;

/**
 * Everything a run writes: its messages (each with its `message.created`
 * event, in one transaction), its streamed events, its progress, its end.
 */
export function createRunWriter({ services, run, lastSeq }: { services: Services; run: RunRow; lastSeq: number }) {
  const { store, log } = services;
  const events = createRunEventLog({ store, signals: services.signals, runId: run.id, owner: services.instanceId, lastSeq });
  let progress: { steps: number; usage: Usage } | null = null;
  /** Where each tool call's result was saved, for its `tool_call.completed` event. */
  const resultSeqs = new Map<string, number>();

  return {
    emit: events.emit,
    flush: events.flush,

    /** Recorded with the next save (or the end), not in a write of its own. */
    setProgress(steps: number, usage: Usage) {
      progress = { steps, usage };
    },

    save: (messages: NewMessage[]) =>
      events.commit(async (tx, event) => {
        const rows = await tx.messages.append({ conversationId: run.conversationId, runId: run.id, items: messages });
        if (progress) await tx.runs.update(run.id, progress);
        progress = null;
        for (const row of rows) {
          event("message.created", { seq: row.seq });
          if (row.role === "tool") resultSeqs.set((row.content as [ToolResultBlock])[0].tool_call_id, row.seq);
        }
      }),

    /** Announces a call's result, which `save` has stored. */
    toolCallCompleted({ tool_call_id, name, is_error, duration_ms }: { tool_call_id: string; name: string; is_error: boolean; duration_ms: number }) {
      const seq = resultSeqs.get(tool_call_id);
      if (seq === undefined) return;
      resultSeqs.delete(tool_call_id);
      events.emit("tool_call.completed", { tool_call_id, name, is_error, duration_ms, seq });
    },

    /**
     * Records the outcome and the terminal event together. Never throws: if it
     * cannot write, the run's lease lapses and the sweeper ends or resumes it.
     */
    async finish(end: RunEnd): Promise<void> {
      try {
        const ended = await events.commit(async (tx, event) => {
          const row = await tx.runs.update(run.id, {
            status: end.status,
            stopReason: end.stopReason,
            error: end.error,
            ...(progress ?? {}),
            ...(end.steps !== undefined && { steps: end.steps }),
            ...(end.usage !== undefined && { usage: end.usage }),
            ended: true,
          });
          if (row) event(`run.${end.status}`, { run: runStateOf(row) });
          return row;
        });
        if (ended) {
          const { status, stopReason, steps, usage, error } = ended;
          log.info({ run_id: run.id, conversation_id: run.conversationId, status, stop_reason: stopReason, steps, usage, error }, "run finished");
        }
      } catch (err) {
        if (err instanceof LeaseLost) log.warn({ run_id: run.id }, "this process no longer owns the run (taken over, or its conversation deleted); its end is not recorded here");
        else log.error({ run_id: run.id, err: describeError(err) }, "could not record the end of a run");
      }
    },
  };
}

export type RunWriter = ReturnType<typeof createRunWriter>;
