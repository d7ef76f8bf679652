import { refersToAttachments, type NewMessage } from "../core/messages.js";
import type { Store } from "../store/store.js";

/**
 * The histories of conversations whose runs ended here, kept (up to
 * `maxChars`, least recently used first out) so the next run reads only
 * what was appended since instead of the whole history again. Safe with
 * several processes: whatever was appended since (by anyone) is read from
 * the database, and a copy is used only while its conversation's history
 * version is the one it was kept at (a refused turn marked on another
 * instance changes messages already written, and the version with them).
 */
/** What a run's creation appended, from `firstSeq` on, as it saved it: it need not be read back. */
export interface Appended {
  firstSeq: number;
  messages: NewMessage[];
}

export function createHistoryCache({ maxChars }: { maxChars: number }) {
  const kept = new Map<string, { messages: NewMessage[]; chars: number; version: number }>();
  let total = 0;
  const take = (conversationId: string) => {
    const entry = kept.get(conversationId);
    if (!entry) return undefined;
    kept.delete(conversationId);
    total -= entry.chars;
    return entry;
  };

  return {
    /** The conversation's whole history, in order (`version`: its history version, read with the conversation); while a run holds it, it is not kept here. */
    async load(
      store: Pick<Store, "messages">,
      conversationId: string,
      version: number,
      appended?: Appended,
    ): Promise<NewMessage[]> {
      const entry = take(conversationId);
      const known = entry && entry.version === version ? entry.messages : [];
      // The run just appended these right after what is known (seqs have no gaps): nothing to read.
      if (appended && appended.firstSeq === known.length + 1) return [...known, ...appended.messages];
      // Message seqs run 1, 2, 3 … without gaps: `known` ends at seq known.length.
      const since = await store.messages.history(conversationId, { afterSeq: known.length });
      return known.length === 0 ? since : [...known, ...since];
    },

    /** Keeps a history that is whole and saved (seq i + 1 at index i), at the history version it was read at, for the conversation's next run. */
    keep(conversationId: string, history: NewMessage[], version: number): void {
      take(conversationId);
      const chars = history.reduce((sum, m) => sum + charsOf(m), 0);
      if (chars > maxChars) return;
      const messages = history.map(withoutConversion);
      kept.set(conversationId, { messages, chars, version });
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

/**
 * A message that refers to attachments, as a copy. The providers keep each
 * message's conversion for as long as the message lives, and that of an
 * image or a PDF holds its whole base64: kept here as it is, every history
 * in the cache would hold its attachments' bytes, which its `chars` (the
 * content's JSON: attachment ids) do not count. The next run converts the copy
 * once, as it would a history read from the database.
 */
const withoutConversion = (message: NewMessage): NewMessage =>
  refersToAttachments(message) ? { ...message } : message;

const CHARS = new WeakMap<NewMessage, number>();
function charsOf(message: NewMessage): number {
  let chars = CHARS.get(message);
  if (chars === undefined) CHARS.set(message, (chars = JSON.stringify(message.content).length));
  return chars;
}
