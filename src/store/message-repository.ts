import { and, asc, eq, gt, gte, inArray, max, or, sql } from "drizzle-orm";
import type { Exclusion, NewMessage } from "../core/messages.js";
import type { Db } from "./db.js";
import type { MessageEvents } from "./event-repository.js";
import { newId } from "./ids.js";
import { toPgSafe } from "./pg-safe.js";
import { conversations, messages, type MessageRow, type MessageSpan } from "./schema.js";

/** A message as a model is sent it, with its place in the history. */
export type HistoryRow = Pick<MessageRow, "seq" | "role" | "content" | "kind" | "summarizes" | "excluded">;

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

/** A message's events as its columns (those it does not carry left out). */
const columnsOf = ({ eventSeq, startedEventSeq, completedEventSeq, durationMs }: MessageEvents) => ({
  eventSeq,
  ...(startedEventSeq !== undefined && { startedEventSeq }),
  ...(completedEventSeq !== undefined && { completedEventSeq, durationMs }),
});

export function createMessageRepository({ db }: { db: Db }) {
  return {
    /**
     * Appends messages at the end of a conversation's history, numbered after
     * its last one. Safe only where nothing else appends to the conversation
     * meanwhile: the request that creates its run (which holds the
     * one-active-run index entry) or that run itself (through `runs.save`).
     */
    async append({
      conversationId,
      runId,
      items,
      firstSeq,
      eventsOf,
      spanOf,
    }: {
      conversationId: string;
      runId: string | null;
      items: NewMessage[];
      /** The `seq` of the first item, when the caller knows where the history ends. @default one past its last message */
      firstSeq?: number;
      /**
       * The ids of item i's events in the run's log that are its own columns,
       * not rows of `run_events`: its `message.created`, and a tool result's
       * call's start and end (see src/runs/run-numbering.ts). @default none (not announced)
       */
      eventsOf?: (i: number) => MessageEvents;
      /** Item i's trace span, stored on it (see src/runs/trace/message-span.ts). @default none */
      spanOf?: (i: number) => MessageSpan;
    }): Promise<MessageRow[]> {
      if (items.length === 0) return [];
      const first = firstSeq ?? (await this.lastSeq(conversationId)) + 1;
      return db
        .insert(messages)
        .values(
          items.map((m, i) => ({
            id: newId("msg"),
            conversationId,
            seq: first + i,
            role: m.role,
            ...(m.role === "user" && m.kind && { kind: m.kind }),
            ...(m.role === "user" && m.summarizes && { summarizes: m.summarizes }),
            ...(m.excluded && { excluded: m.excluded }),
            content: toPgSafe(m.content),
            runId,
            ...(eventsOf && columnsOf(eventsOf(i))),
            ...(spanOf && { span: toPgSafe(spanOf(i)) }),
          })),
        )
        .returning();
    },

    /** The `seq` of the conversation's last message; 0 when it has none. */
    async lastSeq(conversationId: string): Promise<number> {
      const [row] = await db
        .select({ last: max(messages.seq) })
        .from(messages)
        .where(eq(messages.conversationId, conversationId));
      return row?.last ?? 0;
    },

    /**
     * The whole history (or all of it after `afterSeq`), in order: one query,
     * of what a model is sent (not the rows' trace spans, ids or times).
     */
    async history(conversationId: string, { afterSeq = 0 }: { afterSeq?: number } = {}): Promise<NewMessage[]> {
      const rows = await db
        .select({
          role: messages.role,
          content: messages.content,
          kind: messages.kind,
          summarizes: messages.summarizes,
          excluded: messages.excluded,
        })
        .from(messages)
        .where(and(eq(messages.conversationId, conversationId), gt(messages.seq, afterSeq)))
        .orderBy(asc(messages.seq));
      return historyOf(rows);
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

    /** Every message of a conversation, in order (its rows: ids, times, runs). */
    all(conversationId: string): Promise<MessageRow[]> {
      return db.select().from(messages).where(eq(messages.conversationId, conversationId)).orderBy(asc(messages.seq));
    },

    /**
     * Changes messages already written (what an item's deletion leaves of
     * them), each row keeping its seq, so the history still runs 1, 2, 3 …
     * without gaps; the conversation's history version moves on with them,
     * so no copy of the history kept in memory outlives the change. Safe
     * where nothing else writes to the conversation meanwhile (under its lock,
     * without an open run).
     */
    async rewrite({
      conversationId,
      changes,
    }: {
      conversationId: string;
      changes: { seq: number; content: MessageRow["content"]; excluded: Exclusion | null }[];
    }): Promise<void> {
      if (changes.length === 0) return;
      for (const { seq, content, excluded } of changes)
        await db
          .update(messages)
          .set({ content: toPgSafe(content), excluded })
          .where(and(eq(messages.conversationId, conversationId), eq(messages.seq, seq)));
      await db
        .update(conversations)
        .set({ historyVersion: sql`${conversations.historyVersion} + 1` })
        .where(eq(conversations.id, conversationId));
    },

    /** Which of these tool call ids the conversation's assistant messages already hold. */
    async callIdsAmong(conversationId: string, ids: string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const holding = ids.map(
        (id) => sql`${messages.content} @> ${JSON.stringify([{ type: "tool_call", id }])}::jsonb`,
      );
      const rows = await db
        .select({ content: messages.content })
        .from(messages)
        .where(and(eq(messages.conversationId, conversationId), eq(messages.role, "assistant"), or(...holding)));
      const asked = new Set(ids);
      return new Set(
        rows.flatMap((r) => r.content.flatMap((b) => (b.type === "tool_call" && asked.has(b.id) ? [b.id] : []))),
      );
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

    /** What a run appended: its conversation's messages from the one that started it. */
    ofRun({
      conversationId,
      runId,
      firstSeq,
    }: {
      conversationId: string;
      runId: string;
      firstSeq: number | null;
    }): Promise<MessageRow[]> {
      return db
        .select()
        .from(messages)
        .where(
          and(eq(messages.conversationId, conversationId), gte(messages.seq, firstSeq ?? 0), eq(messages.runId, runId)),
        )
        .orderBy(asc(messages.seq));
    },
  };
}

export type MessageRepository = ReturnType<typeof createMessageRepository>;
