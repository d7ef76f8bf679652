import { and, asc, count, desc, eq, inArray, sql } from "drizzle-orm";
import { runColumns } from "./run-columns.js";
import type { UserBlock } from "../core/messages.js";
import type { Db } from "./db.js";
import { leaseUntil } from "./run-leases.js";
import type { NewRunFields } from "./run-repository.js";
import { conversations, HOLDING_RUN_STATUSES, runs, type RunRow } from "./schema.js";

/** A run queued behind the conversation's active one (`on_busy: "enqueue"` or `"interrupt"`). */
export interface NewQueuedRun {
  run: NewRunFields;
  content: UserBlock[];
  /** 0: an interrupt (starts before enqueued runs), 1: enqueued. */
  rank: 0 | 1;
  queuedBehind: string | null;
}

const isQueued = eq(runs.status, "queued");
/** First come, first served within a rank; interrupts first. */
const queueOrder = [asc(runs.queueRank), asc(runs.queueOrder)] as const;

/**
 * The queue of runs waiting for their conversation. Whoever creates a run,
 * queues one or starts a queued one holds the conversation's lock
 * (`lockConversation`) in the same transaction, so no run starts ahead of
 * the queue and no queued run is left behind a run that already ended.
 */
export function createRunQueueRepository({ db }: { db: Db }) {
  return {
    /** The conversation's lock (FOR NO KEY UPDATE: saves of its runs, which take FOR KEY SHARE, do not wait for it); false when it does not exist. */
    async lockConversation(conversationId: string): Promise<boolean> {
      const rows = await db
        .select({ id: conversations.id })
        .from(conversations)
        .where(eq(conversations.id, conversationId))
        .for("no key update");
      return rows.length > 0;
    },

    /** The run that holds the conversation (running, or paused on the application), if any. */
    async holdingOf(conversationId: string): Promise<RunRow | undefined> {
      const [row] = await db
        .select(runColumns)
        .from(runs)
        .where(and(eq(runs.conversationId, conversationId), inArray(runs.status, [...HOLDING_RUN_STATUSES])));
      return row;
    },

    async queuedCount(conversationId: string): Promise<number> {
      const [row] = await db
        .select({ n: count() })
        .from(runs)
        .where(and(eq(runs.conversationId, conversationId), isQueued));
      return row?.n ?? 0;
    },

    /** The id of the last queued run of `rank` or before it (what a new run of that rank queues behind). */
    async lastQueued(conversationId: string, rank: 0 | 1): Promise<string | undefined> {
      const [row] = await db
        .select({ id: runs.id })
        .from(runs)
        .where(and(eq(runs.conversationId, conversationId), isQueued, sql`${runs.queueRank} <= ${rank}`))
        .orderBy(desc(runs.queueRank), desc(runs.queueOrder))
        .limit(1);
      return row?.id;
    },

    async insert({ run, content, rank, queuedBehind }: NewQueuedRun): Promise<RunRow> {
      const [row] = await db
        .insert(runs)
        .values({
          ...run,
          status: "queued",
          queuedContent: content,
          queueRank: rank,
          queueOrder: sql`nextval('loopd_run_queue_order')`,
          queuedBehind,
        })
        .returning(runColumns);
      return row!;
    },

    /** The next queued run of the conversation, locked. */
    async lockNext(conversationId: string): Promise<RunRow | undefined> {
      const [row] = await db
        .select(runColumns)
        .from(runs)
        .where(and(eq(runs.conversationId, conversationId), isQueued))
        .orderBy(...queueOrder)
        .limit(1)
        .for("update");
      return row;
    },

    /** A queued run (locked by the caller) starts: running under `owner`'s lease; its content is then the history's. */
    async start(runId: string, { owner, leaseMs }: { owner: string; leaseMs: number }): Promise<RunRow> {
      const [row] = await db
        .update(runs)
        .set({
          status: "running",
          queuedContent: null,
          leaseOwner: owner,
          leaseExpiresAt: leaseUntil(leaseMs),
          // A run's clock starts when it starts: the time it waited in the queue does not count against `max_seconds`.
          pausedMs: sql`${runs.pausedMs} + greatest(0, round(extract(epoch from now() - ${runs.createdAt}) * 1000)::integer)`,
        })
        .where(and(eq(runs.id, runId), isQueued))
        .returning(runColumns);
      return row!;
    },

    /** Ends a run that never started; undefined when it is no longer queued (it started meanwhile). */
    async cancel(runId: string): Promise<RunRow | undefined> {
      const [row] = await db
        .update(runs)
        .set({ status: "cancelled", stopReason: "cancelled", queuedContent: null, completedAt: sql`now()` })
        .where(and(eq(runs.id, runId), isQueued))
        .returning(runColumns);
      return row;
    },

    /**
     * Conversations whose queue waits for no running run and was queued
     * over `olderThanMs` ago (the database's clock): the run ahead ended and whoever ended it did not start
     * the next (its process died). A paused run gives way to a queued one; one waiting out an outage does not.
     */
    async stalled(olderThanMs: number, limit: number): Promise<string[]> {
      const rows = await db
        .selectDistinct({ conversationId: runs.conversationId })
        .from(runs)
        .where(
          and(
            isQueued,
            sql`${runs.createdAt} < now() - ${`${olderThanMs} milliseconds`}::interval`,
            sql`not exists (select 1 from runs r where r.conversation_id = ${runs.conversationId} and r.status in ('running', 'waiting'))`,
          ),
        )
        .limit(limit);
      return rows.map((r) => r.conversationId);
    },
  };
}

export type RunQueueRepository = ReturnType<typeof createRunQueueRepository>;
