import type { AgentEvent } from "../core/agent-events.js";
import type { NewMessage } from "../core/messages.js";
import type { Usage } from "../core/usage.js";
import { endingFields, type RunEnding } from "../core/run-outcome.js";
import type { ToolCallCompletion } from "../core/run-outcome.js";
import { describeError } from "../errors.js";
import type { Services } from "../services.js";
import type { NewRunSpan, RunSaveEnd } from "../store/save-run-step.js";
import type { RunRow } from "../store/schema.js";
import type { LoggedEvent } from "../store/event-repository.js";
import { redactorOf } from "../util/redact.js";
import { createRunTracer, runEndSpan } from "./trace/run-tracer.js";
import { LeaseLost } from "../core/interruptions.js";
import { createRunEventLog } from "./run-event-log.js";
import type { EventInput, RunPosition } from "./run-numbering.js";

/** How the run ended (or why it waits), with what it spent when the ender knows better than the writer's running totals. */
export type RunEnd = RunEnding & { steps?: number; usage?: Usage; unsaved?: NewMessage[] };

/**
 * Everything a run writes: its messages (with their `message.created` and,
 * for tool results, `tool_call.completed` events, in one write), its
 * streamed events, its progress, its end, and its trace (each span in the
 * write of the step it tells; none with `TRACE=off`).
 */
export function createRunWriter({
  services,
  run,
  position,
  committed,
}: {
  services: Services;
  run: RunRow;
  /** Where the run's numbers stand: its events and messages are numbered on from there. */
  position: RunPosition;
  /** What the run's creation committed, for its readers (see `startedEvents`). */
  committed?: LoggedEvent[] | undefined;
}) {
  const { store, log } = services;
  const events = createRunEventLog({
    store,
    signals: services.signals,
    runId: run.id,
    conversationId: run.conversationId,
    owner: services.instanceId,
    position,
    committed,
  });
  let progress: { steps: number; usage: Usage } | null = null;
  let totals = { steps: run.steps, usage: run.usage };
  let ended = false;
  // Null while every step was answered by the run's own model (the usual case: nothing more to write).
  let modelsUsed = run.modelsUsed;
  const takeProgress = () => {
    const p = progress;
    progress = null;
    return p;
  };
  const redactor = redactorOf(services.config);
  const tracer = services.config.trace.enabled
    ? createRunTracer({ redactor, describeTool: services.registry.describe })
    : null;
  // Spans of what happened before the next save (a model call, a recovery): they go with it.
  let spansWaiting: NewRunSpan[] = [];
  const takeSpans = () => {
    const spans = spansWaiting;
    spansWaiting = [];
    return spans;
  };

  return {
    /** Whether `finish` recorded the end: every write of the run succeeded. */
    get ended() {
      return ended;
    },
    emit: events.emit,
    flush: events.flush,
    release: events.release,

    /** A step was answered by this model (a fallback's, perhaps): counted before its progress is set. */
    countModel(provider: string, model: string) {
      if (modelsUsed === null && provider === run.provider && model === run.model) return;
      modelsUsed ??= totals.steps > 0 ? [{ provider: run.provider, model: run.model, steps: totals.steps }] : [];
      const used = modelsUsed.find((m) => m.provider === provider && m.model === model);
      if (used) used.steps++;
      else modelsUsed.push({ provider, model, steps: 1 });
    },

    /** Recorded with the next save (or the end), not in a write of its own. */
    setProgress(steps: number, usage: Usage) {
      progress = { steps, usage };
      totals = progress;
    },

    /**
     * A model call's trace, saved with the next save: the call's answer, or,
     * when it had none, whatever comes next (the run's end at the latest).
     */
    traceModelCall(e: Extract<AgentEvent, { type: "model_call.finished" | "model_call.failed" }>) {
      if (tracer) spansWaiting.push(...tracer.modelCall(e));
    },

    /** A summary call's span, saved with the next save: the summary's, when it wrote one. */
    traceSummary(e: Extract<AgentEvent, { type: "context.summary" }>) {
      if (tracer) spansWaiting.push(tracer.summary(e));
    },

    /** A span saved with the next save (a recovery's, an answer's). */
    trace(span: NewRunSpan) {
      if (tracer) spansWaiting.push(span);
    },

    /** Saves messages; `completed` announces the tool calls whose results are among them; `soon`: with the next save (see `CommitParts`). */
    save: (
      messages: NewMessage[],
      { completed = [], soon = false }: { completed?: ToolCallCompletion[]; soon?: boolean } = {},
    ) =>
      events.commit({
        soon,
        messages,
        progress: takeProgress(),
        spans: (first) => [...takeSpans(), ...(tracer?.saved(messages, first, completed) ?? [])],
        events: (first) => announced(messages, first, completed),
      }),

    /**
     * Records the outcome and the terminal event together — or, for a run
     * that waits for the application (`requires_action`), the calls it waits
     * on, due `actionTimeoutS` from now, and gives up its lease. Never throws:
     * if it cannot write, the run's lease lapses and the sweeper ends or
     * resumes it.
     */
    async finish(
      end: RunEnd,
      { actionTimeoutS = services.config.runs.actionTimeoutS }: { actionTimeoutS?: number } = {},
    ): Promise<void> {
      const steps = end.steps ?? totals.steps;
      const usage = end.usage ?? totals.usage;
      const fields = endingFields(end);
      // A provider's error may quote what it was sent, a key included.
      const error = fields.error && { ...fields.error, message: redactor.text(fields.error.message) };
      const { status, stopReason, budgetExceeded, result } = fields;
      const messages = end.unsaved ?? [];
      try {
        if (modelsUsed !== null) await store.runs.setModelsUsed(run.id, services.instanceId, modelsUsed);
        await events.commit({
          messages,
          progress: { steps, usage },
          spans: (first) => [
            ...takeSpans(),
            ...(tracer
              ? [
                  ...tracer.saved(messages, first, []),
                  endSpan({ ...fields, error }, { steps, usage, timeoutS: actionTimeoutS }),
                ]
              : []),
          ],
          end: saveEndOf({ ...fields, error }, actionTimeoutS),
          // completedAt (or, for a pause, requiredAction) is the database's: the save fills it in.
          events: (first) => [
            ...announced(messages, first, []),
            {
              type: `run.${status}`,
              data: {
                run: {
                  status,
                  stopReason,
                  steps,
                  usage,
                  error,
                  completedAt: null,
                  budgetExceeded,
                  result,
                  ...(modelsUsed && { modelsUsed }),
                },
              },
            },
          ],
        });
        ended = true;
        services.telemetry.runEnded({ status, stopReason, request: run.request });
        const budget = run.request.budget ?? null;
        log.info(
          {
            run_id: run.id,
            conversation_id: run.conversationId,
            status,
            stop_reason: stopReason,
            steps,
            usage,
            budget,
            budget_exceeded: budgetExceeded,
            error,
          },
          "run finished",
        );
      } catch (err) {
        if (err instanceof LeaseLost)
          log.warn(
            { run_id: run.id },
            "this process no longer owns the run (taken over, or its conversation deleted); its end is not recorded here",
          );
        else log.error({ run_id: run.id, err: describeError(err) }, "could not record the end of a run");
      }
    },
  };
}

export type RunWriter = ReturnType<typeof createRunWriter>;

/** The events that announce saved messages: each one's `message.created`, and a `tool_call.completed` for each call whose result is among them. */
function announced(messages: NewMessage[], first: number, completed: ToolCallCompletion[]): EventInput[] {
  return [
    ...messages.map((_, i) => ({ type: "message.created", data: { seq: first + i } })),
    ...completed.flatMap(({ tool_call_id, name, is_error, duration_ms }) => {
      const at = messages.findIndex((m) => m.role === "tool" && m.content[0].tool_call_id === tool_call_id);
      return at < 0
        ? []
        : [{ type: "tool_call.completed", data: { tool_call_id, name, is_error, duration_ms, seq: first + at } }];
    }),
  ];
}

/** What the save records of an end: a pause's calls and deadline, an outage's wake, or the end itself. */
function saveEndOf(end: ReturnType<typeof endingFields>, actionTimeoutS: number): RunSaveEnd {
  const { status, stopReason, error, budgetExceeded, result } = end;
  if (status === "requires_action") return { status, pending: end.pending ?? [], timeoutS: actionTimeoutS };
  if (status === "waiting") return { status, error: error!, outage: end.outage! };
  return { status, stopReason, error, budgetExceeded, result };
}

/** The last span of a run's trace, or of its stretch before a pause; `completed_at` is the database's (filled in by the save). */
function endSpan(
  end: ReturnType<typeof endingFields>,
  { steps, usage, timeoutS }: { steps: number; usage: Usage; timeoutS: number },
): NewRunSpan {
  if (end.status === "requires_action")
    return { type: "run.paused", data: { pending: end.pending ?? [], timeout_s: timeoutS, steps, usage } };
  if (end.status === "waiting")
    return {
      type: "run.waiting",
      data: {
        error: end.error,
        wake_in_ms: end.outage?.wakeInMs ?? null,
        give_up_in_ms: end.outage?.giveUpInMs ?? null,
        probes: end.outage?.probes ?? null,
        steps,
        usage,
      },
    };
  return runEndSpan({
    status: end.status,
    stop_reason: end.stopReason,
    error: end.error,
    budget_exceeded: end.budgetExceeded,
    result: end.result,
    steps,
    usage,
    completed_at: null,
  });
}
