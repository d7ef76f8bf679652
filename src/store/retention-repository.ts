import { sql } from "drizzle-orm";
import { conversations } from "./schema.js";
import type { Db } from "./db.js";

/** The lock one instance holds while it sweeps (any number; it names the sweep). */
const SWEEP_LOCK = 0x6c70_6472; // "lpdr"

/** A throw-away conversation's time, `ms` from the database's now. */
export const discardAtIn = (ms: number) => sql`now() + make_interval(secs => ${ms / 1000})`;

/**
 * Deletes conversations idle for `days` — not changed (PATCH), no run
 * started or ended since — at most `batch` of them, in one transaction that
 * first takes the sweep's transaction lock: `null` when another instance
 * holds it (it is sweeping). A conversation with an open run (queued,
 * running, paused) is never deleted, nor one a run is being created for
 * right now (its row is locked: skipped). Messages, runs, events and spans
 * go with it (ON DELETE CASCADE; messages by a trigger, migration 0027).
 */
export function createRetentionRepository({ db }: { db: Db }) {
  return {
    async sweepBatch({ days, batch }: { days: number; batch: number }): Promise<string[] | null> {
      return db.transaction(async (tx) => {
        const locked = (await tx.execute(sql`select pg_try_advisory_xact_lock(${SWEEP_LOCK}) as got`)) as unknown as {
          rows: { got: boolean }[];
        };
        if (!locked.rows[0]?.got) return null;
        const cutoff = sql`now() - make_interval(days => ${days})`;
        const idle = sql`not exists (select 1 from runs r where r.conversation_id = c.id
          and (r.status in ('queued', 'running', 'requires_action', 'waiting') or coalesce(r.completed_at, r.created_at) >= ${cutoff}))`;
        // The candidates, locked (a run being created for one holds it: skipped)...
        const candidates = (await tx.execute(sql`
          select c.id from conversations c where c.updated_at < ${cutoff} and ${idle}
          limit ${batch} for update of c skip locked`)) as unknown as { rows: { id: string }[] };
        if (candidates.rows.length === 0) return [];
        // ...then checked again in a statement of its own, which sees every run committed before the locks were
        // taken; a run created after must lock the row too, and waits for this delete (then finds no conversation).
        const ids = candidates.rows.map((r) => r.id);
        const deleted = (await tx.execute(sql`
          delete from conversations c where c.id in (${sql.join(
            ids.map((id) => sql`${id}`),
            sql`, `,
          )})
            and c.updated_at < ${cutoff} and ${idle}
          returning c.id`)) as unknown as { rows: { id: string }[] };
        return deleted.rows.map((r) => r.id);
      });
    },

    /** Throw-away conversations (`store: false`): each of `ids` that still exists is kept `keepMs` more. The ids that were. */
    async keepThrowaways(ids: string[], keepMs: number): Promise<string[]> {
      const kept = await db
        .update(conversations)
        .set({ discardAt: discardAtIn(keepMs) })
        // One parameter however many (a busy process holds thousands; a statement takes at most 65,535).
        .where(sql`${conversations.id} in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`)
        .returning({ id: conversations.id });
      return kept.map((c) => c.id);
    },

    /** Throw-away conversations whose time has passed: no process keeps them any more (at most `limit`). */
    async overdueThrowaways(limit: number): Promise<Array<{ id: string; tenantId: string }>> {
      return db
        .select({ id: conversations.id, tenantId: conversations.tenantId })
        .from(conversations)
        .where(sql`${conversations.discardAt} < now()`)
        .limit(limit);
    },
  };
}
