import { textOf, type NewMessage } from "../core/messages.js";

/**
 * The history as `summarize` sends it: the newest summary first, in place of
 * the messages it condenses (seq `from_seq` … `to_seq`), then every later
 * message in order, without the summaries (older ones are condensed into
 * the newest; the newest is already first). `history[i]` has seq i + 1.
 * With no summary, the history itself.
 */
export function withSummary(history: readonly NewMessage[]): readonly NewMessage[] {
  const at = newestSummaryIndex(history);
  if (at < 0) return history;
  const summary = history[at]! as Extract<NewMessage, { role: "user" }>;
  const covered = summary.summarizes!.to_seq;
  return [summaryAsSent(summary), ...history.slice(covered).filter((m) => !isSummary(m))];
}

export const isSummary = (m: NewMessage): boolean =>
  m.role === "user" && m.kind === "summary" && m.summarizes !== undefined;

/** Where the newest summary is in the history; -1 when it holds none. */
export function newestSummaryIndex(history: readonly NewMessage[]): number {
  for (let i = history.length - 1; i >= 0; i--) if (isSummary(history[i]!)) return i;
  return -1;
}

/** One sent form per summary, kept as long as it is: every call sends the same object (the providers' conversion caches see it again). */
const SENT = new WeakMap<NewMessage, NewMessage>();

/** A summary as the model reads it: its text, under a line saying what it stands for. */
function summaryAsSent(summary: Extract<NewMessage, { role: "user" }>): NewMessage {
  let sent = SENT.get(summary);
  if (!sent) {
    const { from_seq, to_seq } = summary.summarizes!;
    const header = `[Summary of messages ${from_seq}–${to_seq} of this conversation, written by loopd to fit the context window; the messages themselves are no longer sent]`;
    const text = textOf(summary);
    sent = {
      role: "user",
      kind: "summary",
      summarizes: summary.summarizes!,
      content: [{ type: "text", text: `${header}\n\n${text}` }],
    };
    SENT.set(summary, sent);
  }
  return sent;
}
