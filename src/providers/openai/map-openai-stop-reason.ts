import type { ModelStopReason } from "../../core/model-provider.js";

/**
 * Chat Completions `finish_reason` → loopd's. A response that carries tool
 * calls is `tool_use` whatever the reason says: some OpenAI-compatible
 * servers finish a tool-calling turn with `stop`. (A stream with no reason at
 * all was cut short and never gets here.)
 */
export function mapOpenAIStopReason(
  finishReason: string | null | undefined,
  { hasToolCalls }: { hasToolCalls: boolean },
): ModelStopReason {
  switch (finishReason) {
    case "length":
      return "max_tokens";
    case "content_filter":
      return "content_filter";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "stop":
    default:
      return hasToolCalls ? "tool_use" : "end_turn";
  }
}
