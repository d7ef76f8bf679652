import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { runColumns } from "./run-columns.js";
import type { Db } from "./db.js";
import { runs, type RunRow } from "./schema.js";

/** Lease times come from the database's clock only, so processes with skewed clocks agree. */
export const leaseUntil = (ms: number): SQL => sql`now() + ${`${ms} milliseconds`}::interval`;
/** Leases are held only by runs executing (a queued run has none until it starts). */
export const isRunning = eq(runs.status, "running");

/** The run repository's leases: renewing them, taking over the lapsed ones, letting go of them. */
export function runLeases(db: Db) {
  return {
    /**
     * Extends the leases this process holds and reports which of its runs a
     * client asked to cancel (possibly through another process). The rows
     * are locked in id order, the order a batch of saves takes them in
     * (`loopd_save_many`), so the two never wait for each other in a cycle.
     */
    async renewLeases({
      owner,
      runIds,
      leaseMs,
    }: {
      owner: string;
      runIds: string[];
      leaseMs: number;
    }): Promise<{ id: string; cancelRequested: boolean; cancelReason: string | null }[]> {
      if (runIds.length === 0) return [];
      const held = db
        .select({ id: runs.id })
        .from(runs)
        .where(and(inArray(runs.id, runIds), eq(runs.leaseOwner, owner), isRunning))
        // Byte order, as `loopd_save_many` takes a batch's runs.
        .orderBy(sql`${runs.id} collate "C"`)
        .for("update");
      return db
        .update(runs)
        .set({ leaseExpiresAt: leaseUntil(leaseMs) })
        .where(inArray(runs.id, held))
        .returning({ id: runs.id, cancelRequested: runs.cancelRequested, cancelReason: runs.cancelReason });
    },

    /**
     * Takes over, in one statement, up to `limit` active runs whose owner
     * stopped renewing its lease (a crashed process). With `grantedBefore`,
     * also every run of another owner whose lease was last granted before
     * then, expired or not (the embedded database: a process that started at
     * `grantedBefore` is the only one that can own them now). Rows another
     * sweeper is claiming are skipped, not waited for, and locks are taken in
     * id order so two sweepers never deadlock.
     */
    async claimExpired({
      owner,
      leaseMs,
      limit,
      grantedBefore,
    }: {
      owner: string;
      leaseMs: number;
      limit: number;
      grantedBefore?: Date | undefined;
    }): Promise<RunRow[]> {
      const lapsed = sql`(${runs.leaseExpiresAt} < now() or ${runs.leaseExpiresAt} is null)`;
      const expired = grantedBefore
        ? sql`(${lapsed} or (${runs.leaseOwner} is distinct from ${owner} and ${runs.leaseExpiresAt} < ${grantedBefore.toISOString()}::timestamptz + ${`${leaseMs} milliseconds`}::interval))`
        : lapsed;
      const claimable = db
        .select({ id: runs.id })
        .from(runs)
        .where(and(isRunning, expired))
        .orderBy(asc(runs.id))
        .limit(limit)
        .for("update", { skipLocked: true });
      return db
        .update(runs)
        .set({ leaseOwner: owner, leaseExpiresAt: leaseUntil(leaseMs) })
        .where(inArray(runs.id, claimable))
        .returning(runColumns);
    },

    /**
     * Claims, in one statement, up to `limit` runs waiting out an outage whose
     * wake time came (the earliest first): each becomes `running` under
     * `owner`'s lease, its wake and give-up times kept (they say whether this
     * wake is a probe or the end of the wait). Rows another process is
     * claiming are skipped; the partial index on the wake time makes this
     * cheap when nothing waits.
     */
    async claimWaking({ owner, leaseMs, limit }: { owner: string; leaseMs: number; limit: number }): Promise<RunRow[]> {
      const due = db
        .select({ id: runs.id })
        .from(runs)
        .where(and(eq(runs.status, "waiting"), sql`${runs.wakeAt} <= now()`))
        .orderBy(asc(runs.wakeAt))
        .limit(limit)
        .for("update", { skipLocked: true });
      return db
        .update(runs)
        .set({ status: "running", leaseOwner: owner, leaseExpiresAt: leaseUntil(leaseMs) })
        .where(and(inArray(runs.id, due), eq(runs.status, "waiting")))
        .returning(runColumns);
    },

    /** Lets one run of a stopping process be taken over at once. */
    async releaseLease(runId: string, owner: string): Promise<void> {
      await db
        .update(runs)
        .set({ leaseExpiresAt: sql`now()` })
        .where(and(eq(runs.id, runId), eq(runs.leaseOwner, owner), isRunning));
    },

    /** Lets every run of a stopping process be taken over at once. */
    async releaseLeases(owner: string): Promise<void> {
      await db
        .update(runs)
        .set({ leaseExpiresAt: sql`now()` })
        .where(and(eq(runs.leaseOwner, owner), isRunning));
    },
  };
}
