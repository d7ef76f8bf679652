import { notFound } from "../errors.js";
import type { Services } from "../services.js";
import { uniqueViolation } from "../store/unique-violation.js";
import type { CreateConversationInput, createConversationService } from "./conversation-service.js";

type Conversations = ReturnType<typeof createConversationService>;

/** A chat id names a conversation by its id when it looks like one (`conv_…`); any other string is an AI SDK chat id. */
export const isConversationId = (chatId: string) => chatId.startsWith("conv_");

/**
 * The conversation a chat id names, as the AI SDK routes read it: a
 * conversation id of the caller's (another tenant's or an unknown one: not
 * found), or the caller's conversation with that `chat_id`, created with
 * `settings` when there is none yet (`create: false`: not found instead;
 * `beforeCreate` throws to refuse it: what the first message would be
 * refused for is then refused before anything is saved).
 * Two first messages of one new chat at once make one conversation: the
 * loser of the unique index reads the winner's.
 */
export async function openChat(
  { services, conversations }: { services: Pick<Services, "store">; conversations: Conversations },
  {
    tenant,
    chatId,
    settings,
    create,
    beforeCreate,
  }: {
    tenant: string;
    chatId: string;
    settings?: CreateConversationInput | undefined;
    create: boolean;
    beforeCreate?: (() => Promise<unknown>) | undefined;
  },
) {
  if (isConversationId(chatId)) return conversations.get(tenant, chatId);
  const existing = await services.store.conversations.getByChatId(tenant, chatId);
  if (existing) return conversations.get(tenant, existing.id);
  if (!create) throw notFound("chat", chatId);
  await beforeCreate?.();
  try {
    return await conversations.create(tenant, settings ?? {}, { chatId });
  } catch (err) {
    if (uniqueViolation(err) !== "conversations_tenant_chat_id_idx") throw err;
    const winner = await services.store.conversations.getByChatId(tenant, chatId);
    if (!winner) throw err;
    return conversations.get(tenant, winner.id);
  }
}
