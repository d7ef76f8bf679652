import type { ConversationRow } from "../../store/schema.js";

/** A loopd conversation as OpenAI's conversation object: its id (`conv_…`, the same on both APIs), its creation in Unix seconds, its metadata. */
export function conversationObject(row: Pick<ConversationRow, "id" | "createdAt" | "metadata">) {
  return {
    id: row.id,
    object: "conversation" as const,
    created_at: Math.floor(row.createdAt.getTime() / 1000),
    metadata: row.metadata,
  };
}

export type ConversationObject = ReturnType<typeof conversationObject>;
