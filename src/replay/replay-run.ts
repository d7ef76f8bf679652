import type { AssistantBlock } from "../core/messages.js";
import type { ModelProvider, ModelRequestBody, ProviderName } from "../core/model-provider.js";
import type { TraceEntry } from "../runs/trace/read-trace.js";
import type { Redactor } from "../util/redact.js";
import { compareAnswers, type ReplayVerdict } from "./compare-answers.js";

/** One recorded model call sent again. */
export interface ReplayStep {
  step: number;
  /** `error`: the replay's call failed (the message says why); `recorded_error`: the recorded step had failed (its last attempt is sent again), so there is nothing to compare with. */
  verdict: ReplayVerdict | "error" | "recorded_error";
  recorded: AnswerSummary | null;
  replayed: AnswerSummary | null;
  error?: string;
}

export interface AnswerSummary {
  text: string;
  tool_calls: { name: string; input: Record<string, unknown> }[];
  stop_reason: string;
}

export interface ReplayReport {
  run_id: string;
  recorded: { provider: string; model: string };
  replayed: { provider: ProviderName; model: string };
  steps: ReplayStep[];
  /** How many steps got each verdict. */
  summary: Partial<Record<ReplayStep["verdict"], number>>;
}

/** The run replayed, as the store and the API both tell it. */
export interface ReplayedRun {
  id: string;
  provider: string;
  model: string;
}

/**
 * Sends each recorded model call of a run again, rebuilt from its trace
 * (`entries`: `withRequests` over the spans, read from the database or from
 * the server's trace route), to `provider` (default: the run's own) and
 * `model` (default: the call's), and compares the answers. Never runs a
 * tool: each next request holds the recorded results anyway. Steps are
 * replayed one after the other.
 */
export async function replayRun({
  entries,
  providers,
  run,
  redactor,
  provider: providerName,
  model,
  onStep,
}: {
  entries: AsyncIterable<TraceEntry>;
  providers: Record<ProviderName, ModelProvider>;
  run: ReplayedRun;
  redactor: Redactor;
  /** @default the run's provider */
  provider?: ProviderName | undefined;
  /** @default each call's own model */
  model?: string | undefined;
  onStep?: (step: ReplayStep) => void;
}): Promise<ReplayReport> {
  const name = providerName ?? (run.provider as ProviderName);
  const provider = providers[name];
  const steps: ReplayStep[] = [];
  const replay = async ({ span, request }: TraceEntry & { request: ModelRequestBody }) => {
    const recorded = answered(span)
      ? summaryOf(span.response as { content: AssistantBlock[]; stop_reason: string })
      : null;
    let step: ReplayStep;
    try {
      const answer = await provider.generate({
        ...request,
        model: model ?? (name === run.provider ? request.model : ""),
      });
      const replayed = summaryOf({ content: answer.content, stop_reason: answer.stopReason });
      const verdict = recorded
        ? compareAnswers((span.response as { content: AssistantBlock[] }).content, answer.content)
        : "recorded_error";
      step = { step: span.step as number, verdict, recorded, replayed };
    } catch (err) {
      step = {
        step: span.step as number,
        verdict: "error",
        recorded,
        replayed: null,
        error: redactor.text(err instanceof Error ? err.message : String(err)),
      };
    }
    steps.push(step);
    onStep?.(step);
  };
  // A failed attempt is sent again only when no later attempt answered its step (the step the run failed at).
  let unanswered: (TraceEntry & { request: ModelRequestBody }) | null = null;
  for await (const entry of entries) {
    const { span, request } = entry;
    if (!request) continue;
    if (!answered(span)) {
      unanswered = { span, request };
      continue;
    }
    if (unanswered && unanswered.span.step !== span.step) await replay(unanswered);
    unanswered = null;
    await replay({ span, request });
  }
  if (unanswered) await replay(unanswered);
  const summary: ReplayReport["summary"] = {};
  for (const s of steps) summary[s.verdict] = (summary[s.verdict] ?? 0) + 1;
  return {
    run_id: run.id,
    recorded: { provider: run.provider, model: run.model },
    replayed: { provider: name, model: model ?? (name === run.provider ? run.model : provider.defaultModel) },
    steps,
    summary,
  };
}

/** An attempt that the model answered: a `model.call` span not `outcome: "failed"` (nor an older trace's `model.failed`). */
const answered = (span: TraceEntry["span"]) => span.type === "model.call" && span.outcome !== "failed";

function summaryOf({ content, stop_reason }: { content: AssistantBlock[]; stop_reason: string }): AnswerSummary {
  return {
    text: content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(""),
    tool_calls: content.flatMap((b) => (b.type === "tool_call" ? [{ name: b.name, input: b.input }] : [])),
    stop_reason,
  };
}
