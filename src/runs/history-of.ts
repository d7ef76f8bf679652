import type { NewMessage } from "../agent/messages.js";
import type { MessageRow } from "../store/schema.js";

/** Stored rows as the loop and the converters take them. */
export const historyOf = (rows: readonly MessageRow[]): NewMessage[] =>
  rows.map((r) => (r.kind ? { role: r.role, content: r.content, kind: r.kind } : { role: r.role, content: r.content }) as NewMessage);
