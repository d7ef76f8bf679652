import type { ModelStopReason, ProviderName } from "./model.js";
import type { Usage } from "./messages.js";

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
  | {
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
      /** From the call's start to the first streamed piece of its answer; null when nothing was streamed. */
      first_chunk_ms: number | null;
      /** What this call cost in USD; null when the model has no price. */
      cost_usd: number | null;
    }
  | { type: "model_call.failed"; step: number; provider: ProviderName; model: string; error: string; status: number | null; duration_ms: number };
