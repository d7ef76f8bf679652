import type { Message } from "../../core/messages.js";
import type { PendingToolCall } from "../../core/run-outcome.js";
import type { ConversationRow } from "../../store/schema.js";
import { itemsOfMessages, type Item } from "../items/index.js";

/** What decides how a conversation's history shows as items: its tools, the calls a paused run waits on, what `include` asks. */
export interface ItemsContext {
  conversation: Pick<ConversationRow, "id" | "tools" | "clientTools">;
  pending?: readonly PendingToolCall[] | undefined;
  /** `include` holds `message.input_image.image_url`: a stored image's item names where it is read. */
  imageUrls?: boolean | undefined;
}

/**
 * Messages as the items of `/v1/conversations/:id/items`. A call is a
 * `function_call` when its tool is the client's: one of the conversation's
 * client tools, or any tool the server does not run (a call a client added
 * as an item); the server's own tools' calls are `mcp_call` items.
 */
export function itemsOfConversation(
  messages: readonly Message[],
  { conversation, pending, imageUrls }: ItemsContext,
): Item[] {
  const server = new Set(conversation.tools);
  const clientTools = new Set(conversation.clientTools.map((t) => t.name));
  for (const m of messages)
    if (m.role === "assistant")
      for (const b of m.content) if (b.type === "tool_call" && !server.has(b.name)) clientTools.add(b.name);
  return itemsOfMessages(messages, {
    clientTools,
    pending,
    include: "all",
    ...(imageUrls && {
      attachmentUrl: (attachmentId: string) => `/conversations/${conversation.id}/attachments/${attachmentId}`,
    }),
  });
}

/** A page of items as OpenAI's list object. */
export function itemList(data: Item[], hasMore: boolean) {
  return {
    object: "list" as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: hasMore,
  };
}
