import type { AgentEvent, ModelCallRequest } from "../core/agent-events.js";
import { ProviderError, type ModelProvider, type ModelResponse } from "../core/model-provider.js";
import { emptyUsage, totalTokens, type Usage } from "../core/usage.js";
import { startModelCallDeadline } from "./model-call-deadline.js";
import type { PreparedStep } from "./prepare-step.js";
import type { RunClock } from "./run-clock.js";
import type { RunState } from "./run-state.js";

/** How one attempt at a step's model call went. */
export type Attempted =
  | {
      type: "answered";
      response: ModelResponse;
      started: number;
      firstPartAt: number | null;
      sent: { request: ModelCallRequest; body: object | null; started_at: number; attempt: number };
    }
  /** `streamed`: text deltas of it went out (they are withdrawn before the next attempt). */
  | { type: "failed"; error: ProviderError; streamed: boolean }
  | { type: "cancelled" }
  /** The run's time budget ran out while the call streamed. */
  | { type: "out_of_time" };

/** A rough count of tokens in streamed text, for a call cut off before the provider said how many. */
const CHARS_PER_TOKEN = 4;

/**
 * One attempt at a step's model call, to one model, bounded by its deadlines
 * (the time left of the call's, the stream's idle watchdog, the run's time
 * budget). What it used is spent whatever happens (a call cut off
 * mid-answer is still billed, priced as its model's); a failed attempt is
 * reported (`model_call.failed`, its trace span).
 */
export async function attemptModelCall(
  step: PreparedStep,
  {
    provider,
    model,
    attempt,
    callTimeoutMs,
    callLimitMs,
    state,
    clock,
    signal,
    idleMs,
    emit,
    now,
  }: {
    provider: ModelProvider;
    model: string;
    /** Which attempt at the step this is, every model's counted. */
    attempt: number;
    /** What is left of the call's deadline (it spans every attempt). */
    callTimeoutMs: number;
    /** The call's whole deadline, as a timeout's error names it. */
    callLimitMs: number;
    state: RunState;
    clock: RunClock;
    signal: AbortSignal | undefined;
    idleMs: number | undefined;
    emit: (event: AgentEvent) => void;
    now: () => number;
  },
): Promise<Attempted> {
  const started = now();
  let streamedChars = 0;
  let reported: Usage | null = null;
  let firstPartAt: number | null = null;
  const sent = { request: { ...step.record, model }, body: null as object | null, started_at: started, attempt };
  const deadline = startModelCallDeadline({ signal, callTimeoutMs, callLimitMs, idleMs });
  try {
    const response = await provider.generate({
      ...step.request,
      model,
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
    return { type: "answered", response, started, firstPartAt, sent };
  } catch (thrown) {
    const partial: Usage = { ...(reported ?? emptyUsage()) };
    partial.output_tokens = Math.max(partial.output_tokens, Math.ceil(streamedChars / CHARS_PER_TOKEN));
    if (totalTokens(partial) > 0) state.spend(partial, model);
    if (signal?.aborted) return { type: "cancelled" };
    // A passed deadline aborts the call: the provider then throws an AbortError, but the run was not cancelled.
    const expired = deadline.expired();
    if (expired && step.boundByBudget && clock.timeLeftMs() <= 0) return { type: "out_of_time" };
    const err = expired ?? thrown;
    const error =
      err instanceof ProviderError ? err : new ProviderError(err instanceof Error ? err.message : String(err));
    emit({
      type: "model_call.failed",
      step: step.step,
      provider: provider.name,
      model,
      error: error.message,
      status: error.status,
      duration_ms: now() - started,
      ...sent,
    });
    return { type: "failed", error, streamed: streamedChars > 0 };
  } finally {
    deadline.dispose();
  }
}
