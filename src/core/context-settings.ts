/**
 * How a conversation's model calls are sent its history (the API contract,
 * "Context sent to the model"). The stored history never changes; these
 * settings only decide what each call is sent of it.
 */
export interface ContextSettings {
  /** `full`: every message (refused turns excepted); `trim`: old tool results stubbed, the oldest exchanges left out past `max_input_tokens`. */
  strategy: "full" | "trim";
  /** Under `trim`: how many of the newest tool results are always sent whole. */
  keep_tool_results: number;
  /** Under `trim`: the most input tokens a call should be sent (an estimate); null: no limit. */
  max_input_tokens: number | null;
}

export const DEFAULT_CONTEXT: ContextSettings = { strategy: "full", keep_tool_results: 6, max_input_tokens: null };
