import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "./db.js";
import { newId } from "./ids.js";
import { olderThan, pageOf, type Keyset } from "./keyset.js";
import { ACTIVE_RUN_STATUSES, conversations, runs, type ConversationRow } from "./schema.js";

export type ConversationWithActiveRun = ConversationRow & { messageCount: number; activeRunId: string | null };

export interface NewConversation {
  title: string | null;
  system: string | null;
  provider: string;
  model: string;
  tools: string[];
  metadata: Record<string, unknown>;
}


export function createConversationRepository({ db, notifies }: { db: Db; notifies: boolean }) {
  // Matches the partial index runs_one_active_per_conversation_key, so it is an index lookup.
  const activeRunId = sql<string | null>`(select r.id from runs r where r.conversation_id = "conversations"."id" and r.status in ('queued', 'running') limit 1)`;
  // The history's length, read off the end of its primary key.
  const messageCount = sql<number>`(select coalesce(max(m.seq), 0) from messages m where m.conversation_id = "conversations"."id")`.mapWith(Number);
  const withActiveRun = { ...conversationColumns(), messageCount, activeRunId };

  return {
    async create(input: NewConversation): Promise<ConversationWithActiveRun> {
      const [row] = await db
        .insert(conversations)
        .values({ id: newId("conv"), ...input })
        .returning();
      return { ...row!, messageCount: 0, activeRunId: null };
    },

    async get(id: string): Promise<ConversationWithActiveRun | undefined> {
      const [row] = await db.select(withActiveRun).from(conversations).where(eq(conversations.id, id));
      return row;
    },

    /** Newest first; fetches one extra row to know whether there is a next page. */
    async list({ limit, after }: { limit: number; after?: Keyset | undefined }) {
      const rows = await db
        .select(withActiveRun)
        .from(conversations)
        .where(olderThan(conversations.createdAt, conversations.id, after))
        .orderBy(desc(conversations.createdAt), desc(conversations.id))
        .limit(limit + 1);
      return pageOf(rows, limit);
    },

    /**
     * Deletes the conversation; messages, runs and events go with it (ON
     * DELETE CASCADE). Returns the runs that were still active (null when
     * there was no such conversation), whose readers are told through
     * `loopd_run_events` when this commits. Active runs' rows are locked
     * first: a run's own writes lock the run, then the conversation, and
     * taking them in the same order keeps a delete from deadlocking with a
     * run's save. With the conversation locked, no run can be created on it
     * any more: the active runs read after that are all there are.
     */
    async delete(id: string): Promise<{ activeRunIds: string[] } | null> {
      return db.transaction(async (tx) => {
        const activeRuns = () =>
          tx.select({ id: runs.id }).from(runs).where(and(eq(runs.conversationId, id), inArray(runs.status, [...ACTIVE_RUN_STATUSES])));
        await activeRuns().for("update");
        const [found] = await tx.select({ id: conversations.id }).from(conversations).where(eq(conversations.id, id)).for("update");
        if (!found) return null;
        const active = await activeRuns();
        await tx.delete(conversations).where(eq(conversations.id, id));
        if (notifies) for (const run of active) await tx.execute(sql`select pg_notify('loopd_run_events', ${run.id})`);
        return { activeRunIds: active.map((r) => r.id) };
      });
    },

    async update(id: string, patch: Partial<NewConversation>): Promise<ConversationWithActiveRun | undefined> {
      const [row] = await db
        .update(conversations)
        .set({ ...patch, updatedAt: new Date() })
        .where(eq(conversations.id, id))
        .returning({ id: conversations.id });
      return row ? this.get(id) : undefined;
    },
  };
}

function conversationColumns() {
  const { id, createdAt, updatedAt, title, system, provider, model, tools, metadata } = conversations;
  return { id, createdAt, updatedAt, title, system, provider, model, tools, metadata };
}

export type ConversationRepository = ReturnType<typeof createConversationRepository>;
