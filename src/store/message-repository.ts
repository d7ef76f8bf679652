import { and, asc, eq, gt, gte, inArray, sql } from "drizzle-orm";
import type { NewMessage } from "../agent/messages.js";
import type { Db } from "./db.js";
import { newId } from "./ids.js";
import { toPgSafe } from "./pg-safe.js";
import { conversations, messages, type MessageRow } from "./schema.js";

export function createMessageRepository({ db }: { db: Db }) {
  return {
    /**
     * Appends messages at the end of a conversation's history (in the
     * transaction of a store from `store.transaction`). Bumping `message_count` takes the conversation's row lock,
     * so concurrent appends queue up and `seq` has no gaps.
     */
    async append(
      { conversationId, runId, items }: { conversationId: string; runId: string | null; items: NewMessage[] },
    ): Promise<MessageRow[]> {
      if (items.length === 0) return [];
      const [counter] = await db
        .update(conversations)
        .set({ messageCount: sql`${conversations.messageCount} + ${items.length}`, updatedAt: new Date() })
        .where(eq(conversations.id, conversationId))
        .returning({ messageCount: conversations.messageCount });
      if (!counter) throw new Error(`conversation ${conversationId} vanished while appending`);
      const first = counter.messageCount - items.length + 1;
      return db
        .insert(messages)
        .values(
          items.map((m, i) => ({
            id: newId("msg"),
            conversationId,
            seq: first + i,
            role: m.role,
            content: toPgSafe(m.content),
            runId,
          })),
        )
        .returning();
    },

    /** The whole history, in order: one query. */
    history(conversationId: string): Promise<MessageRow[]> {
      return db.select().from(messages).where(eq(messages.conversationId, conversationId)).orderBy(asc(messages.seq));
    },

    /**
     * The last assistant message and everything after it: the only place an
     * unanswered tool call can be, since every model call is preceded by a repair.
     */
    sinceLastAssistant(conversationId: string): Promise<MessageRow[]> {
      const lastAssistant = sql`(select coalesce(max(m.seq), 0) from messages m where m.conversation_id = ${conversationId} and m.role = 'assistant')`;
      return db
        .select()
        .from(messages)
        .where(and(eq(messages.conversationId, conversationId), gte(messages.seq, lastAssistant)))
        .orderBy(asc(messages.seq));
    },

    page({ conversationId, afterSeq, limit }: { conversationId: string; afterSeq: number; limit: number }) {
      return db
        .select()
        .from(messages)
        .where(and(eq(messages.conversationId, conversationId), gt(messages.seq, afterSeq)))
        .orderBy(asc(messages.seq))
        .limit(limit);
    },

    /** The messages of a conversation with these `seq`s, in order. */
    bySeqs(conversationId: string, seqs: number[]): Promise<MessageRow[]> {
      if (seqs.length === 0) return Promise.resolve([]);
      return db
        .select()
        .from(messages)
        .where(and(eq(messages.conversationId, conversationId), inArray(messages.seq, seqs)))
        .orderBy(asc(messages.seq));
    },

    ofRun(runId: string): Promise<MessageRow[]> {
      return db.select().from(messages).where(eq(messages.runId, runId)).orderBy(asc(messages.seq));
    },
  };
}

export type MessageRepository = ReturnType<typeof createMessageRepository>;
