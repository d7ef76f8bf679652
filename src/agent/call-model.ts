import type { AgentEvent, FallbackReason } from "../core/agent-events.js";
import type { ModelProvider, ModelResponse, ProviderError } from "../core/model-provider.js";
import type { RunError } from "../core/run-outcome.js";
import { attemptModelCall, type Attempted } from "./attempt-model-call.js";
import { createModelCooldown, type ModelCooldown, type ModelKey } from "./model-cooldown.js";
import { failureOf, nextModel, unavailable, type ModelChoice, type Tried } from "./model-chain.js";
import type { PreparedStep } from "./prepare-step.js";
import { afterFailure, DEFAULT_RETRY, type RetrySettings } from "./retry-policy.js";
import type { RunClock } from "./run-clock.js";
import type { RunState } from "./run-state.js";
import { sleep } from "./sleep.js";

/** How one model call went. */
export type Called =
  | { type: "answered"; response: ModelResponse }
  | { type: "failed"; error: RunError }
  | { type: "cancelled" }
  /** The run's time budget ran out while the call streamed. */
  | { type: "out_of_time" };

export type { ModelChoice } from "./model-chain.js";

/** How calls ride out a failing provider: the retry rule, and the process's circuits (per model and server). */
export interface ModelResilience {
  retry: RetrySettings;
  cooldown: ModelCooldown;
}

/** One retry loop for every model call, the SDKs making none (see `afterFailure`). */
const defaultResilience = (): ModelResilience => ({ retry: DEFAULT_RETRY, cooldown: createModelCooldown() });

/**
 * Makes a step's model call: to the run's model, retried as `afterFailure`
 * says, then to each fallback in turn (skipping those cooling down, unless
 * all are: then the one whose cooldown ends first is probed at once), all
 * within the call's deadline and the run's time. Each attempt's usage is
 * spent; text a failed attempt streamed is withdrawn (`step.restarted`); no
 * tool runs before an answer. An answer with calls is saved before anything
 * acts on them; one without is held for the next write.
 */
export async function callModel(
  step: PreparedStep,
  {
    provider,
    fallbacks = [],
    resilience = defaultResilience(),
    state,
    clock,
    signal,
    idleMs,
    emit,
    now = Date.now,
  }: {
    provider: ModelProvider;
    /** The models tried, in order, when the run's cannot answer. */
    fallbacks?: ModelChoice[];
    resilience?: ModelResilience;
    state: RunState;
    clock: RunClock;
    signal: AbortSignal | undefined;
    /** The most the stream may go without part of the answer. */
    idleMs: number | undefined;
    emit: (event: AgentEvent) => void;
    now?: () => number;
  },
): Promise<Called> {
  const { retry, cooldown } = resilience;
  const chain: ModelChoice[] = [{ provider, model: step.request.model }, ...fallbacks];
  const keys: ModelKey[] = chain.map((c) => ({
    provider: c.provider.name,
    model: c.model,
    baseUrlHost: c.provider.baseUrlHost?.() ?? "default",
  }));
  const ref = (at: number) => ({ provider: chain[at]!.provider.name, model: chain[at]!.model });
  const callEnds = now() + step.callTimeoutMs;
  const tried: Tried = new Map();
  const pick = (from: number) => nextModel({ from, keys, cooldown, tried });
  let at = pick(0);
  if (at !== null && at > 0) fallOver(0, at, "cooling_down", null);
  let attempt = 0;

  while (at !== null) {
    const { provider: p, model } = chain[at]!;
    let reason: FallbackReason | null = null;
    let last: ProviderError | null = null;
    for (let here = 1; reason === null; here++) {
      const attempted: Attempted = await attemptModelCall(step, {
        provider: p,
        model,
        attempt: ++attempt,
        callTimeoutMs: Math.max(0, callEnds - now()),
        callLimitMs: step.callTimeoutMs,
        state,
        clock,
        signal,
        idleMs,
        emit,
        now,
      });
      if (attempted.type === "answered") {
        cooldown.succeeded(keys[at]!);
        return answered(attempted, step, { provider: p, state, emit, now });
      }
      if (attempted.type !== "failed") return attempted;
      const { error } = attempted;
      last = error;
      tried.set(at, { attempts: here, error });
      cooldown.failed(keys[at]!, { status: error.status, message: error.message });
      if (attempted.streamed)
        emit({ type: "step.restarted", step: step.step, reason: `the model call failed mid-answer: ${error.message}` });
      const timeLeftMs = Math.min(callEnds - now(), clock.timeLeftMs());
      const next = afterFailure(error, { attempt: here, settings: retry, timeLeftMs });
      if (next.type === "fail") return { type: "failed", error: { code: "provider_error", message: error.message } };
      if (next.type === "out_of_time") return { type: "failed", error: unavailable(chain, tried) };
      if (next.type === "fall_over") reason = next.reason;
      else if (at < chain.length - 1 && cooldown.admit(keys[at]!).type === "skip") reason = "cooling_down";
      else {
        emit({
          type: "model.retry",
          step: step.step,
          attempt: here,
          ...ref(at),
          delay_ms: next.delayMs,
          reason: failureOf(error),
        });
        if (!(await sleep(next.delayMs, signal))) return { type: "cancelled" };
      }
    }
    const to = pick(at + 1);
    if (to === null) return { type: "failed", error: unavailable(chain, tried) };
    fallOver(at, to, reason, last);
    at = to;
  }
  return { type: "failed", error: unavailable(chain, tried) };

  function fallOver(from: number, to: number, code: FallbackReason, error: ProviderError | null) {
    const failure = error ? failureOf(error) : { status: null, type: null, message: "the model is cooling down" };
    emit({ type: "model.fallback", step: step.step, from: ref(from), to: ref(to), reason: { code, ...failure } });
  }
}

/** A step's answer: counted, spent (priced as the model that gave it), reported, and saved or held. */
async function answered(
  { response, started, firstPartAt, sent }: Extract<Attempted, { type: "answered" }>,
  step: PreparedStep,
  {
    provider,
    state,
    emit,
    now,
  }: { provider: ModelProvider; state: RunState; emit: (e: AgentEvent) => void; now: () => number },
): Promise<Called> {
  state.countStep({ rawTokens: step.rawTokens, outputTokens: response.usage.output_tokens });
  const cost = state.spend(response.usage, sent.request.model);
  const { input_tokens, cache_read_tokens, cache_write_tokens } = response.usage;
  state.learnTokens({ counted: input_tokens + cache_read_tokens + cache_write_tokens, estimated: step.rawTokens });
  emit({
    type: "model_call.finished",
    step: step.step,
    provider: provider.name,
    model: response.model || sent.request.model,
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
  // Held: the loop writes it before anything acts on it (with its calls' results, when they only read).
  if (response.content.length > 0) state.hold([{ role: "assistant", content: response.content }]);
  return { type: "answered", response };
}
