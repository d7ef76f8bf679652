/**
 * How a conversation's model calls are sent its history (the API contract,
 * "Context sent to the model"). The stored history never changes; these
 * settings only decide what each call is sent of it.
 */
export interface ContextSettings {
  /**
   * `full`: every message (refused turns excepted); `trim`: old tool results
   * stubbed, the oldest exchanges left out past `max_input_tokens`;
   * `summarize`: as `trim`, but the oldest exchanges are condensed into a
   * saved summary, sent in their place, instead of being left out.
   */
  strategy: "full" | "trim" | "summarize";
  /** Under `trim` and `summarize`: how many of the newest tool results are always sent whole. */
  keep_tool_results: number;
  /** Under `trim` and `summarize` (which needs it): the most input tokens a call should be sent (an estimate); null: no limit. */
  max_input_tokens: number | null;
  /** Under `summarize`: the model that writes summaries; the run's model when absent. */
  summary_model?: string;
}

/**
 * `trim`, keeping the newest 4 results whole: on bench (h)'s 30-step tool-heavy
 * conversation it bills as little as resending everything with the prompt
 * cache (17.3% of the naive resend) while its largest request is 30% of the
 * naive largest, not 100%; keeping 5 or 6 bills more and sends more, keeping
 * 3 rewrites the cache more often (bench/results/2026-12-04-issue22-context.md).
 */
export const DEFAULT_CONTEXT: ContextSettings = { strategy: "trim", keep_tool_results: 4, max_input_tokens: null };
