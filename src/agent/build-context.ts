import { DEFAULT_CONTEXT, type ContextSettings } from "../core/context-settings.js";
import { estimateMessageTokens } from "./estimate-tokens.js";
import { isLoopdMessage, sendable, type NewMessage, type ToolResultBlock } from "../core/messages.js";
import { isSummary, withSummary } from "./summary-in-context.js";

/** What one model call is sent of the history, and what was left out of it. */
export interface BuiltContext {
  /** With nothing left out or stubbed, the given history array itself (not a copy). */
  messages: NewMessage[];
  /** The request's estimated input tokens (system and tools included), calibrated. */
  estimatedTokens: number;
  /** The same, uncalibrated: what the provider's count is compared with to calibrate. */
  rawTokens: number;
  /** The estimate (calibrated) before exchanges were left out to fit `max_input_tokens`: what a summary must bring under it. */
  uncutTokens: number;
  /** Tool results sent as a stub. */
  stubbed: number;
  /** Messages not sent: refused turns, and whole exchanges cut to fit `max_input_tokens`. */
  leftOut: { refused: number; trimmed: number };
}

/** A result shorter than this is sent whole even when old: its stub would save nothing. */
const STUB_MIN_CHARS = 400;

/**
 * The context of the next model call, built from the stored history, which
 * is never changed (a pure function: no I/O, same input, same output):
 *
 * - Always: turns the provider refused are left out (it refuses every later
 *   request whose context still holds one).
 * - `trim`: tool results older than the newest `keep_tool_results` go as a
 *   stub that keeps the call's id and says how to get the content back.
 *   They are cleared `keep_tool_results` at a time, so between two clearings
 *   the request only grows at its end and its prefix stays byte-identical
 *   (the prompt cache keeps hitting). The results of the model's last step
 *   are never cleared: it has not read them yet.
 * - `summarize`: as `trim`, and the newest summary in the history is sent
 *   first, in place of the messages it condenses (and of older summaries);
 *   the loop writes one before a call that would pass `max_input_tokens`
 *   (see summarize-context.ts), so the cut below is only its fallback.
 * - `trim` with `max_input_tokens`: past it, the oldest exchanges (a user
 *   message and what followed it; then, within the newest one, the oldest
 *   steps: a call and its results) are left out whole, never a call without
 *   its result, never the newest user message nor the last step. The cut
 *   moves in steps of a quarter of the limit, for the same reason.
 *
 * `fixedTokens` is what the system prompt and the tools weigh;
 * `tokenRatio` turns estimates into the provider's count (see `calibrateTokens`).
 */
export function buildContext({
  history,
  settings = DEFAULT_CONTEXT,
  fixedTokens = 0,
  tokenRatio = 1,
}: {
  history: readonly NewMessage[];
  settings?: ContextSettings;
  fixedTokens?: number;
  tokenRatio?: number;
}): BuiltContext {
  // A summary stored while the conversation was `summarize` is not sent under another strategy: what it condenses is.
  const summarized =
    settings.strategy === "summarize"
      ? withSummary(history)
      : history.some(isSummary)
        ? history.filter((m) => !isSummary(m))
        : history;
  const kept = sendable(summarized as NewMessage[]);
  const refused = summarized.length - kept.length;
  if (settings.strategy === "full") {
    const rawTokens = fixedTokens + sumTokens(kept);
    const estimatedTokens = Math.ceil(rawTokens * tokenRatio);
    return {
      messages: kept,
      rawTokens,
      estimatedTokens,
      uncutTokens: estimatedTokens,
      stubbed: 0,
      leftOut: { refused, trimmed: 0 },
    };
  }
  const { messages, stubbed } = stubOldResults(kept, settings.keep_tool_results);
  let out = messages;
  let trimmed = 0;
  let rawTokens = fixedTokens + sumTokens(out);
  const uncutTokens = Math.ceil(rawTokens * tokenRatio);
  if (settings.max_input_tokens !== null && rawTokens * tokenRatio > settings.max_input_tokens) {
    const cut = cutToFit(out, { limit: settings.max_input_tokens / tokenRatio, total: rawTokens });
    out = cut.messages;
    trimmed = cut.leftOut;
    rawTokens = fixedTokens + sumTokens(out);
  }
  return {
    messages: out,
    rawTokens,
    estimatedTokens: Math.ceil(rawTokens * tokenRatio),
    uncutTokens,
    stubbed,
    leftOut: { refused, trimmed },
  };
}

const sumTokens = (messages: readonly NewMessage[]) => messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0);

function stubOldResults(messages: NewMessage[], keep: number): { messages: NewMessage[]; stubbed: number } {
  const results: number[] = [];
  let lastAssistant = -1;
  messages.forEach((m, i) => {
    if (m.role === "tool") results.push(i);
    else if (m.role === "assistant") lastAssistant = i;
  });
  // Cleared in batches of `keep`: from `keep` to `2 × keep - 1` results are sent whole.
  const batch = Math.max(1, keep);
  const clear = Math.floor(Math.max(0, results.length - keep) / batch) * batch;
  const cleared = results.slice(0, clear).filter((i) => i < lastAssistant);
  if (cleared.length === 0) return { messages, stubbed: 0 };
  const out = [...messages];
  let stubbed = 0;
  for (const i of cleared) {
    const stub = stubOf(out[i]!);
    if (stub !== out[i]) stubbed++;
    out[i] = stub;
  }
  return { messages: out, stubbed };
}

/** One stub per message, kept as long as it is: every call sends the very same object (the providers' conversion caches see it again). */
const STUBS = new WeakMap<NewMessage, NewMessage>();

export function stubOf(message: NewMessage): NewMessage {
  if (message.role !== "tool") return message;
  const result = message.content[0];
  // A result's images are what costs most: one with images is cleared whatever its text's length, images and all.
  const images = result.images?.length ?? 0;
  if (result.content.length < STUB_MIN_CHARS && images === 0) return message;
  let stub = STUBS.get(message);
  if (!stub) {
    const chars = result.content.length.toLocaleString("en-US");
    const { images: _cleared, ...kept } = result;
    const held = images === 0 ? "" : `, ${images === 1 ? "an image" : `${images} images`}`;
    const content: ToolResultBlock = {
      ...kept,
      content: `[result of ${result.name} cleared from the context to save space: ${chars} chars${held}${result.is_error ? ", an error" : ""}; call ${result.name} again if you need it]`,
    };
    STUBS.set(message, (stub = { role: "tool", content: [content] }));
  }
  return stub;
}

/**
 * Leaves out the oldest whole units until the rest fits: exchanges before
 * the newest user message, then the steps after it (an assistant message
 * with its results and notices), the last step always kept. What is left
 * out is a multiple of a quarter of the limit (or all that may go), so the
 * cut only moves when the history has grown by that much.
 */
function cutToFit(
  messages: NewMessage[],
  { limit, total }: { limit: number; total: number },
): { messages: NewMessage[]; leftOut: number } {
  const newestUser = messages.findLastIndex(isUserTurn);
  const starts: number[] = [];
  messages.forEach((m, i) => {
    const startsExchange = isUserTurn(m) && i < newestUser;
    const startsStep = m.role === "assistant" && i > newestUser;
    if ((startsExchange || startsStep) && i > 0) starts.push(i);
  });
  if (newestUser > 0) starts.push(newestUser);
  // Every unit starts before the last step (the last assistant message on), which always stays.
  starts.sort((a, b) => a - b);
  const quarter = limit / 4;
  const mustDrop = Math.ceil((total - limit) / quarter) * quarter;
  let dropped = 0;
  let from = 0;
  for (let s = 0; s < starts.length && dropped < mustDrop; s++) {
    const to = starts[s]!;
    dropped += sumTokens(messages.slice(from, to));
    // Past the newest user message, it is still sent.
    if (from <= newestUser && newestUser < to) dropped -= estimateMessageTokens(messages[newestUser]!);
    from = to;
  }
  if (from === 0) return { messages, leftOut: 0 };
  // Before the newest user message, units go whole; after it, the newest user message stays first.
  const kept = from <= newestUser ? messages.slice(from) : [messages[newestUser]!, ...messages.slice(from)];
  const leftOut = messages.length - kept.length;
  return { messages: [withNote(kept[0]!, leftOut), ...kept.slice(1)], leftOut };
}

/** A message the user wrote: it starts an exchange. */
export const isUserTurn = (m: NewMessage): boolean => m.role === "user" && !isLoopdMessage(m);

/** The first message sent says that earlier ones were left out. */
function withNote(first: NewMessage, leftOut: number): NewMessage {
  if (first.role !== "user") return first;
  const note = `[${leftOut} earlier message${leftOut === 1 ? "" : "s"} of this conversation left out to fit the context window]`;
  return { ...first, content: [{ type: "text", text: note }, ...first.content] };
}
