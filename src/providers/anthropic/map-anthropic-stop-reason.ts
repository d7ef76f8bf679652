import type { ModelStopReason } from "../../core/model-provider.js";

/**
 * Anthropic `stop_reason` → loopd's. `stop_sequence` is a normal end (loopd
 * sets no stop sequences); an unknown future reason is treated as the end of
 * the turn rather than failing the run.
 */
export function mapAnthropicStopReason(stopReason: string | null | undefined): ModelStopReason {
  switch (stopReason) {
    case "tool_use":
      return "tool_use";
    case "max_tokens":
      return "max_tokens";
    case "refusal":
      return "refusal";
    case "pause_turn":
      return "pause_turn";
    case "model_context_window_exceeded":
      return "context_window_exceeded";
    case "end_turn":
    case "stop_sequence":
    default:
      return "end_turn";
  }
}
