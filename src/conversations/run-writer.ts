import type { NewMessage, Usage } from "../agent/messages.js";
import type { AgentRunResult } from "../agent/run-agent-loop.js";
import { describeError } from "../errors.js";
import type { RunRow } from "../store/schema.js";
import { presentMessage, presentRun } from "./present.js";
import { createRunEventLog, LeaseLost } from "./run-event-log.js";
import type { Services } from "./services.js";

export type RunEnd = Pick<AgentRunResult, "status" | "stopReason" | "error"> & Partial<Pick<AgentRunResult, "steps" | "usage">>;

/**
 * Everything a run writes: its messages (each with its `message.created`
 * event, in one transaction), its streamed events, its progress, its end.
 */
export function createRunWriter({ services, run, lastSeq }: { services: Services; run: RunRow; lastSeq: number }) {
  const { store, log } = services;
  const events = createRunEventLog({
    store,
    signals: services.signals,
    broadcast: services.broadcast,
    runId: run.id,
    owner: services.instanceId,
    lastSeq,
  });
  let progress: { steps: number; usage: Usage } | null = null;

  return {
    emit: events.emit,
    flush: events.flush,

    /** Recorded with the next save (or the end), not in a write of its own. */
    setProgress(steps: number, usage: Usage) {
      progress = { steps, usage };
    },

    save: (messages: NewMessage[]) =>
      events.commit(async (tx, event) => {
        const rows = await store.messages.append(tx, { conversationId: run.conversationId, runId: run.id, items: messages });
        if (progress) await store.runs.update(tx, run.id, progress);
        progress = null;
        for (const row of rows) event("message.created", { message: presentMessage(row) });
      }),

    /**
     * Records the outcome and the terminal event together. Never throws: if it
     * cannot write, the run's lease lapses and the sweeper ends or resumes it.
     */
    async finish(end: RunEnd): Promise<void> {
      try {
        const ended = await events.commit(async (tx, event) => {
          const row = await store.runs.update(tx, run.id, {
            status: end.status,
            stopReason: end.stopReason,
            error: end.error,
            ...(progress ?? {}),
            ...(end.steps !== undefined && { steps: end.steps }),
            ...(end.usage !== undefined && { usage: end.usage }),
            completedAt: new Date(),
          });
          if (row) event(`run.${row.status}`, { run: presentRun(row) });
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
