import type { NewMessage } from "../core/messages.js";
import type { Store } from "../store/store.js";
import { historyOf } from "./history-of.js";

/**
 * The histories of conversations whose runs ended here, kept (up to
 * `maxChars`, least recently used first out) so the next run reads only
 * what was appended since instead of the whole history again. Safe with
 * several processes: messages are never changed once written, and whatever
 * was appended since (by anyone) is read from the database.
 */
export function createHistoryCache({ maxChars }: { maxChars: number }) {
  const kept = new Map<string, { messages: NewMessage[]; chars: number }>();
  let total = 0;
  const take = (conversationId: string) => {
    const entry = kept.get(conversationId);
    if (!entry) return undefined;
    kept.delete(conversationId);
    total -= entry.chars;
    return entry.messages;
  };

  return {
    /** The conversation's whole history, in order; while a run holds it, it is not kept here. */
    async load(store: Pick<Store, "messages">, conversationId: string): Promise<NewMessage[]> {
      const known = take(conversationId) ?? [];
      // Message seqs run 1, 2, 3 … without gaps: `known` ends at seq known.length.
      const since = historyOf(await store.messages.history(conversationId, { afterSeq: known.length }));
      return known.length === 0 ? since : [...known, ...since];
    },

    /** Keeps a history that is whole and saved (seq i + 1 at index i) for the conversation's next run. */
    keep(conversationId: string, messages: NewMessage[]): void {
      take(conversationId);
      const chars = messages.reduce((sum, m) => sum + charsOf(m), 0);
      if (chars > maxChars) return;
      kept.set(conversationId, { messages, chars });
      total += chars;
      for (const [id, entry] of kept) {
        if (total <= maxChars) break;
        kept.delete(id);
        total -= entry.chars;
      }
    },

    forget(conversationId: string): void {
      take(conversationId);
    },

    get size() {
      return kept.size;
    },
  };
}

export type HistoryCache = ReturnType<typeof createHistoryCache>;

const CHARS = new WeakMap<NewMessage, number>();
function charsOf(message: NewMessage): number {
  let chars = CHARS.get(message);
  if (chars === undefined) CHARS.set(message, (chars = JSON.stringify(message.content).length));
  return chars;
}
