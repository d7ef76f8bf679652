import type { ConversationService } from "../../conversations/conversation-service.js";
import { presentMessage } from "../../conversations/present.js";
import { AppError, notFound } from "../../errors.js";
import type { RunManager } from "../../runs/run-manager.js";
import type { Services } from "../../services.js";
import type { ConversationWithActiveRun } from "../../store/conversation-repository.js";
import type { Repositories } from "../../store/store.js";
import type { Item } from "../items/index.js";
import { addItems } from "./add-items.js";
import { conversationObject } from "./conversation-object.js";
import { itemList, itemsOfConversation } from "./conversation-items.js";
import { changesOfDeletion } from "./delete-item.js";
import type { ConversationInputItem } from "./messages-of-items.js";

export type Metadata = Record<string, string>;
export type ItemOrder = "asc" | "desc";

/** `include` values that change what an item shows (the others are accepted and change nothing here). */
const IMAGE_URLS = "message.input_image.image_url";

/**
 * OpenAI's Conversations API over loopd's conversations: the same rows, the
 * same ids, each conversation's history shown as items (see
 * `itemsOfConversation`). Every call is a tenant's: another's conversation
 * is not found.
 */
export function createOpenAIConversations({
  services,
  conversations,
  runs,
}: {
  services: Services;
  conversations: ConversationService;
  runs: Pick<RunManager, "cancelLocal">;
}) {
  const { store } = services;
  const load = async (tenant: string, id: string) => {
    const row = await store.conversations.get(tenant, id);
    if (!row) throw notFound("conversation", id);
    return row;
  };
  /** A conversation's items as they stand, with what a paused run waits on. */
  const itemsOf = async (
    repos: Pick<Repositories, "messages" | "runs">,
    row: ConversationWithActiveRun,
    include: readonly string[] = [],
  ): Promise<Item[]> => {
    const run = row.activeRunId ? await repos.runs.get(row.activeRunId) : undefined;
    const messages = (await repos.messages.all(row.id)).map(presentMessage);
    return itemsOfConversation(messages, {
      conversation: row,
      pending: run?.requiredAction?.tool_calls,
      imageUrls: include.includes(IMAGE_URLS),
    });
  };
  const itemOf = (items: Item[], id: string, itemId: string) => {
    const item = items.find((i) => i.id === itemId);
    if (!item) throw new AppError("not_found", `item ${itemId} does not exist in conversation ${id}`);
    return item;
  };

  return {
    /** A conversation with the default configuration, its metadata, and its first items (all or nothing). */
    async create(
      tenant: string,
      { items = [], metadata }: { items?: ConversationInputItem[]; metadata?: Metadata | null },
    ) {
      const created = await conversations.create(tenant, { metadata: metadata ?? {} });
      try {
        await addItems(services, { tenant, conversationId: created.id, items });
        return conversationObject(await load(tenant, created.id));
      } catch (err) {
        await store.conversations.delete(tenant, created.id);
        throw err;
      }
    },

    get: async (tenant: string, id: string) => conversationObject(await load(tenant, id)),

    /** Replaces the metadata (null: none), as OpenAI's update does. */
    async update(tenant: string, id: string, { metadata }: { metadata: Metadata | null }) {
      const row = await store.conversations.update(tenant, id, { metadata: metadata ?? {} });
      if (!row) throw notFound("conversation", id);
      return conversationObject(row);
    },

    /** Deletes the loopd conversation (a run still going is stopped), as `DELETE /conversations/:id` does. */
    async delete(tenant: string, id: string) {
      await conversations.delete(tenant, id, runs);
      return { id, object: "conversation.deleted" as const, deleted: true as const };
    },

    async addItems(
      tenant: string,
      id: string,
      { items, include = [] }: { items: ConversationInputItem[]; include?: string[] },
    ) {
      const rows = await addItems(services, { tenant, conversationId: id, items });
      const row = await load(tenant, id);
      return itemList(
        itemsOfConversation(rows.map(presentMessage), { conversation: row, imageUrls: include.includes(IMAGE_URLS) }),
        false,
      );
    },

    /** A page of items: `order` by their place in the history (`desc`: newest first), from after the item `after`. */
    async listItems(
      tenant: string,
      id: string,
      {
        after,
        limit,
        order,
        include = [],
      }: { after?: string | undefined; limit: number; order: ItemOrder; include?: string[] },
    ) {
      const all = await itemsOf(store, await load(tenant, id), include);
      const ordered = order === "desc" ? all.reverse() : all;
      let start = 0;
      if (after !== undefined) {
        const at = ordered.findIndex((i) => i.id === after);
        if (at < 0)
          throw new AppError("invalid_request", `after: no item ${after} in conversation ${id}`, {
            field: "query.after",
          });
        start = at + 1;
      }
      const page = ordered.slice(start, start + limit);
      return itemList(page, start + limit < ordered.length);
    },

    getItem: async (tenant: string, id: string, itemId: string, include: string[] = []) =>
      itemOf(await itemsOf(store, await load(tenant, id), include), id, itemId),

    /**
     * Deletes an item, between runs (`conversation_busy` while one is open),
     * under the conversation's lock, as adding items does; see
     * `changesOfDeletion` for what each kind of item takes with it. Answers
     * the conversation, as OpenAI's API does.
     */
    async deleteItem(tenant: string, id: string, itemId: string) {
      const row = await store.transaction(async (tx) => {
        if (!(await tx.queue.lockConversation(id))) throw notFound("conversation", id);
        const current = await tx.conversations.get(tenant, id);
        if (!current) throw notFound("conversation", id);
        if (current.activeRunId)
          throw new AppError(
            "conversation_busy",
            `conversation ${id} has an open run (${current.activeRunId}): items are deleted between runs`,
            { active_run_id: current.activeRunId },
          );
        const messages = (await tx.messages.all(id)).map(presentMessage);
        const item = itemOf(itemsOfConversation(messages, { conversation: current }), id, itemId);
        await tx.messages.rewrite({ conversationId: id, changes: changesOfDeletion(messages, item) });
        return current;
      });
      // This process's copy of the history goes now; another's, at its next run (the history version moved).
      services.histories.forget(id);
      return conversationObject(row);
    },
  };
}

export type OpenAIConversations = ReturnType<typeof createOpenAIConversations>;
