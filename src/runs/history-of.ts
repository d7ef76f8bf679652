import type { NewMessage } from "../core/messages.js";
import type { HistoryRow } from "../store/message-repository.js";

/** Stored rows as the loop and the converters take them. */
export const historyOf = (
  rows: readonly Pick<HistoryRow, "role" | "content" | "kind" | "summarizes" | "excluded">[],
): NewMessage[] =>
  rows.map(
    (r) =>
      ({
        role: r.role,
        content: r.content,
        ...(r.kind && { kind: r.kind }),
        ...(r.summarizes && { summarizes: r.summarizes }),
        ...(r.excluded && { excluded: r.excluded }),
      }) as NewMessage,
  );
