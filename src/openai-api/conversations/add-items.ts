import { attachUserContent } from "../../attachments/attach-user-content.js";
import type { NewMessage } from "../../core/messages.js";
import { AppError, notFound } from "../../errors.js";
import type { Services } from "../../services.js";
import { historyOf } from "../../store/message-repository.js";
import type { MessageRow } from "../../store/schema.js";
import type { Repositories } from "../../store/store.js";
import type { AttachmentLimits } from "../../attachments/check-user-content.js";
import { messagesOfItems, pendingCalls, type ConversationInputItem, type DraftMessage } from "./messages-of-items.js";

/** The most items one request adds, as OpenAI's API allows. */
export const MAX_ITEMS_PER_REQUEST = 20;

/**
 * Appends items to a tenant's conversation as loopd messages, between runs:
 * under the conversation's lock, which every creator of a run takes first,
 * so no run starts (and nothing else appends) meanwhile; a conversation with
 * an open run (queued, running, paused, waiting) is `conversation_busy`. The
 * items are checked against the history's end (`messagesOfItems`) and the
 * user's images and files stored: a 400 leaves nothing behind.
 */
export async function addItems(
  { store, config }: Pick<Services, "store" | "config">,
  {
    tenant,
    conversationId,
    items,
  }: { tenant: string; conversationId: string; items: readonly ConversationInputItem[] },
): Promise<MessageRow[]> {
  if (items.length === 0) return [];
  return store.transaction(async (tx) => {
    if (!(await tx.queue.lockConversation(conversationId))) throw notFound("conversation", conversationId);
    const conversation = await tx.conversations.get(tenant, conversationId);
    if (!conversation) throw notFound("conversation", conversationId);
    if (conversation.activeRunId)
      throw new AppError(
        "conversation_busy",
        `conversation ${conversationId} has an open run (${conversation.activeRunId}): items are added between runs`,
        { active_run_id: conversation.activeRunId },
      );
    const tail = historyOf(await tx.messages.sinceLastAssistant(conversationId));
    const callIds = items.flatMap((item) => (item.type === "function_call" ? [item.call_id] : []));
    const drafts = messagesOfItems(items, {
      pending: pendingCalls(tail),
      takenCallIds: await tx.messages.callIdsAmong(conversationId, callIds),
    });
    return saveDrafts(tx, {
      tenant,
      conversationId,
      drafts,
      limits: config.attachments,
      fieldOf: (item, part) => `body.items[${item}].content[${part}]`,
    });
  });
}

/**
 * Drafts appended as the conversation's own messages (of no run), in the
 * transaction `tx` holds: a user message's images and files checked and
 * stored first (`fieldOf` names a part at fault by its item and place).
 */
export async function saveDrafts(
  tx: Pick<Repositories, "attachments" | "messages">,
  {
    tenant,
    conversationId,
    drafts,
    limits,
    fieldOf,
  }: {
    tenant: string;
    conversationId: string;
    drafts: readonly DraftMessage[];
    limits: AttachmentLimits;
    fieldOf: (item: number, part: number) => string;
  },
): Promise<MessageRow[]> {
  const messages: NewMessage[] = [];
  for (const draft of drafts) {
    if (draft.role !== "user") {
      messages.push(draft);
      continue;
    }
    const content = await attachUserContent(
      { store: tx, limits },
      { tenant, conversationId, blocks: draft.blocks, fieldOf: (i) => fieldOf(draft.item, i) },
    );
    messages.push({ role: "user", content });
  }
  return tx.messages.append({ conversationId, runId: null, items: messages });
}
