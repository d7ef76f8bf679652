import type { ContextSettings } from "../core/context-settings.js";
import { textOf, type NewMessage } from "../core/messages.js";
import { isUserTurn, stubOf, type BuiltContext } from "./build-context.js";
import { estimateMessageTokens } from "./estimate-tokens.js";
import { isSummary, newestSummaryIndex } from "./summary-in-context.js";

/** What a summary is the most of the input limit. */
export const SUMMARY_SHARE = 0.15;

/** The exchanges a summary is to condense, with the summary it takes over. */
export interface SummaryPlan {
  from_seq: number;
  to_seq: number;
  /** The text of the newest summary so far, which the new one takes in; null for the first. */
  previous: string | null;
  /** The messages to condense, in order (refused turns and summaries left out). */
  messages: NewMessage[];
}

/**
 * Whether the next call needs a summary under `summarize`, and of what: when
 * its context would pass `max_input_tokens`, the oldest whole exchanges not
 * summarised yet (never the newest user message's), as many as it takes to
 * come back under the limit with room for the summary and a quarter of the
 * limit more, so that summaries are written seldom and the prefix between
 * them stays the same. Null when none is needed or none can help (only the
 * newest exchange is left: the cut of `trim` handles it).
 * `history[i]` has seq i + 1.
 */
export function planSummary({
  history,
  settings,
  built,
  tokenRatio,
}: {
  history: readonly NewMessage[];
  settings: ContextSettings;
  built: BuiltContext;
  tokenRatio: number;
}): SummaryPlan | null {
  const limit = settings.max_input_tokens;
  if (settings.strategy !== "summarize" || limit === null || built.uncutTokens <= limit) return null;
  const at = newestSummaryIndex(history);
  const earlier = at < 0 ? null : (history[at] as Extract<NewMessage, { role: "user" }>);
  const start = earlier?.summarizes?.to_seq ?? 0;
  const newestUser = history.findLastIndex(isUserTurn);
  // Past the summary's end, the messages that could go: indices start … end - 1, ending where an exchange starts.
  const target = (built.uncutTokens - limit + limit * SUMMARY_SHARE + limit / 4) / tokenRatio;
  let saved = 0;
  let end = -1;
  for (let i = start; i < newestUser; i++) {
    const m = history[i]!;
    if (!isSummary(m) && !m.excluded) saved += estimateMessageTokens(m.role === "tool" ? stubOf(m) : m);
    if (isUserTurn(history[i + 1]!)) {
      end = i + 1;
      if (saved >= target) break;
    }
  }
  if (end <= start) return null;
  const messages = history.slice(start, end).filter((m) => !isSummary(m) && !m.excluded);
  if (!messages.some(isUserTurn)) return null;
  return {
    from_seq: earlier?.summarizes?.from_seq ?? 1,
    to_seq: end,
    previous: earlier ? textOf(earlier) : null,
    messages,
  };
}
