import type { AgentEvent } from "../core/agent-events.js";
import type { NewMessage } from "../core/messages.js";
import type { ModelProvider, ModelResponse } from "../core/model-provider.js";
import type { RunError } from "../core/run-outcome.js";
import { emptyUsage, totalTokens, type Usage } from "../core/usage.js";
import { startModelCallDeadline } from "./model-call-deadline.js";
import type { PreparedStep } from "./prepare-step.js";
import type { RunClock } from "./run-clock.js";
import type { RunState } from "./run-state.js";

/** How one model call went. */
export type Called =
  | { type: "answered"; response: ModelResponse }
  | { type: "failed"; error: RunError }
  | { type: "cancelled" }
  /** The run's time budget ran out while the call streamed. */
  | { type: "out_of_time" };

/** A rough count of tokens in streamed text, for a call cut off before the provider said how many. */
const CHARS_PER_TOKEN = 4;

/**
 * Makes one model call, bounded by its deadlines (the call's, the stream's
 * idle watchdog, the run's time budget). What it used is spent whatever
 * happens (a call cut off mid-answer is still billed); an answer with
 * calls is saved before anything acts on them, so they are on record even if
 * the process dies now; one without is held for the next write (the run's
 * end, most often: the two are one write).
 */
export async function callModel(
  step: PreparedStep,
  {
    provider,
    state,
    clock,
    signal,
    idleMs,
    emit,
    now = Date.now,
  }: {
    provider: ModelProvider;
    state: RunState;
    clock: RunClock;
    signal: AbortSignal | undefined;
    /** The most the stream may go without part of the answer. */
    idleMs: number | undefined;
    emit: (event: AgentEvent) => void;
    now?: () => number;
  },
): Promise<Called> {
  const started = now();
  let streamedChars = 0;
  let reported: Usage | null = null;
  let firstPartAt: number | null = null;
  const sent = { request: step.record, body: null as object | null, started_at: started };
  const deadline = startModelCallDeadline({ signal, callTimeoutMs: step.callTimeoutMs, idleMs });
  let response: ModelResponse;
  try {
    response = await provider.generate({
      ...step.request,
      signal: deadline.signal,
      onTextDelta: (delta) => {
        firstPartAt ??= now();
        streamedChars += delta.length;
        emit({ type: "text.delta", delta });
      },
      onProgress: () => {
        firstPartAt ??= now();
        deadline.onProgress();
      },
      onUsage: (u) => (reported = u),
      onRequest: (body) => (sent.body = body),
    });
  } catch (thrown) {
    const partial: Usage = { ...(reported ?? emptyUsage()) };
    partial.output_tokens = Math.max(partial.output_tokens, Math.ceil(streamedChars / CHARS_PER_TOKEN));
    if (totalTokens(partial) > 0) state.spend(partial);
    if (signal?.aborted) return { type: "cancelled" };
    // A passed deadline aborts the call: the provider then throws an AbortError, but the run was not cancelled.
    const expired = deadline.expired();
    if (expired && step.boundByBudget && clock.timeLeftMs() <= 0) return { type: "out_of_time" };
    const err = expired ?? thrown;
    const message = err instanceof Error ? err.message : String(err);
    const status = typeof (err as { status?: unknown }).status === "number" ? (err as { status: number }).status : null;
    emit({
      type: "model_call.failed",
      step: step.step,
      provider: provider.name,
      model: step.request.model,
      error: message,
      status,
      duration_ms: now() - started,
      ...sent,
    });
    return { type: "failed", error: { code: "provider_error", message } };
  } finally {
    deadline.dispose();
  }
  state.countStep({ rawTokens: step.rawTokens, outputTokens: response.usage.output_tokens });
  const cost = state.spend(response.usage);
  const { input_tokens, cache_read_tokens, cache_write_tokens } = response.usage;
  state.learnTokens({ counted: input_tokens + cache_read_tokens + cache_write_tokens, estimated: step.rawTokens });
  emit({
    type: "model_call.finished",
    step: step.step,
    provider: provider.name,
    model: response.model || step.request.model,
    stop_reason: response.stopReason,
    raw_stop_reason: response.rawStopReason,
    usage: response.usage,
    run_steps: state.steps,
    run_usage: state.usage,
    duration_ms: now() - started,
    content: response.content,
    request_id: response.requestId ?? null,
    ttft_ms: firstPartAt === null ? null : firstPartAt - started,
    cost_usd: cost,
    ...sent,
  });
  const answer: NewMessage = { role: "assistant", content: response.content };
  if (response.content.some((b) => b.type === "tool_call")) await state.append([answer]);
  else if (response.content.length > 0) state.hold([answer]);
  return { type: "answered", response };
}
