import type { ContextSettings } from "./context-settings.js";
import type { ModelStopReason, ProviderName, ToolChoice, ToolSpec } from "./model-provider.js";
import type { AssistantBlock, Summarizes } from "./messages.js";
import type { Usage } from "./usage.js";

/**
 * What a model call was built from, besides the stored history: enough to
 * build its request again (`buildContext` and the provider's `buildRequest`
 * are pure), so a trace need not keep the history once per call.
 */
export interface ModelCallRequest {
  /** The history the context was built from: the messages with seq 1 … `history_length`. */
  history_length: number;
  context: ContextSettings;
  token_ratio: number;
  fixed_tokens: number;
  model: string;
  system: string | null;
  tools: ToolSpec[];
  tool_choice: ToolChoice;
  /** This call's output limit: `max_tokens_limit`, or less when a budget left less. */
  max_tokens: number;
  /** The run's output limit per call (config `MAX_TOKENS`). */
  max_tokens_limit: number;
  cache_key: string | null;
}

/** A model call's request, as the loop made it and as the provider's SDK was handed it (null when the provider failed before that). */
interface ModelCallSent {
  request: ModelCallRequest;
  body: object | null;
  /** When the call started (ms since the epoch). */
  started_at: number;
  /** Which attempt at the step this was, counting every model's (1 for the first). */
  attempt?: number;
}

/** What a model call failed with, as the stream and the trace show it (never a credential). */
export interface ModelFailure {
  status: number | null;
  /** The provider's word for it (`overloaded_error`, `rate_limit_exceeded`), or loopd's (`connection`). */
  type: string | null;
  message: string;
}

/** Why a step left a model for the next of its chain. */
export type FallbackReason =
  "attempts_used_up" | "capacity" | "context_window" | "retry_after_too_long" | "cooling_down";

export interface ModelRef {
  provider: ProviderName;
  model: string;
}

/**
 * What the loop reports as it goes. The loop never logs; the edge turns
 * these into log lines and SSE events.
 */
export type AgentEvent =
  | { type: "text.delta"; delta: string }
  | { type: "tool_call.started"; tool_call_id: string; name: string; input: Record<string, unknown> }
  | {
      type: "tool_call.completed";
      tool_call_id: string;
      name: string;
      input: Record<string, unknown>;
      is_error: boolean;
      content: string;
      duration_ms: number;
      status: "ok" | "error" | "timeout" | "cancelled";
    }
  | ({
      type: "model_call.finished";
      step: number;
      provider: ProviderName;
      model: string;
      stop_reason: ModelStopReason;
      raw_stop_reason: string | null;
      usage: Usage;
      /** The run's totals so far, this call included. */
      run_steps: number;
      run_usage: Usage;
      duration_ms: number;
      /** The answer as received. */
      content: AssistantBlock[];
      request_id: string | null;
      /** From the call's start to the first part of the answer; null when nothing streamed before the end. */
      ttft_ms: number | null;
      /** What this call cost in USD; null when the model has no price. */
      cost_usd: number | null;
    } & ModelCallSent)
  | {
      /** A summary call (context `summarize`): its summary is saved next (`summary_seq`), or, when it failed (`error`), the exchanges are left out instead. */
      type: "context.summary";
      provider: ProviderName;
      model: string;
      summarizes: Summarizes;
      summary_seq: number | null;
      answer: string | null;
      error: string | null;
      /** Null when the call failed before the provider said. */
      usage: Usage | null;
      cost_usd: number | null;
      /** The run's totals, this call included (a summary is not a step). */
      run_steps: number;
      run_usage: Usage;
      started_at: number;
      duration_ms: number;
      /** The request as the provider's SDK was handed it; null when it failed before that. */
      body: object | null;
    }
  | {
      /** A model call failed and is made again after `delay_ms`. */
      type: "model.retry";
      step: number;
      /** The attempt that failed (1 for the first). */
      attempt: number;
      provider: ProviderName;
      model: string;
      delay_ms: number;
      reason: ModelFailure;
    }
  | {
      /** The step goes on with the next model of the chain. */
      type: "model.fallback";
      step: number;
      from: ModelRef;
      to: ModelRef;
      reason: { code: FallbackReason } & ModelFailure;
    }
  | {
      /** A call spent tokens of its own (a child agent's run): the run's totals, those included, are saved with its result. */
      type: "usage.added";
      tool_call_id: string;
      run_steps: number;
      run_usage: Usage;
    }
  | {
      /** The text deltas of this step so far are void: the attempt that streamed them failed. */
      type: "step.restarted";
      step: number;
      reason: string;
    }
  | ({
      type: "model_call.failed";
      step: number;
      provider: ProviderName;
      model: string;
      error: string;
      status: number | null;
      duration_ms: number;
    } & ModelCallSent);
