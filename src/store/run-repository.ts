import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import { runColumns } from "./run-columns.js";
import type { Db } from "./db.js";
import { isRunning, leaseUntil, runLeases } from "./run-leases.js";
import { olderThan, pageOf, type Keyset } from "./keyset.js";
import { toPgSafe } from "./pg-safe.js";
import type { RunSave } from "./save-run-step.js";
import type { RunStarter } from "./start-runs.js";
import {
  ACTIVE_RUN_STATUSES,
  conversations,
  OPEN_RUN_STATUSES,
  runs,
  type ModelUsed,
  type RunChild,
  type RunStatus,
  type RunRow,
} from "./schema.js";
import type { RunUsage } from "../core/usage.js";

export type { NewRunFields, StartRun } from "./start-runs.js";

export type NewRun = Omit<typeof runs.$inferInsert, "leaseExpiresAt"> & { leaseMs: number };
/** Not its steps or usage: a running run's are its live columns, which only its saves write. */
export type RunPatch = Partial<Pick<RunRow, "status" | "stopReason" | "error">> & {
  /** Sets `completed_at` to the database's `now()`. */
  ended?: boolean;
};

const isActive = inArray(runs.status, [...ACTIVE_RUN_STATUSES]);

export function createRunRepository({
  db,
  save,
  start,
}: {
  db: Db;
  save: (step: RunSave) => Promise<Date | null>;
  start: RunStarter;
}) {
  return {
    /** See `saveRunStep` and `createRunSaver`. */
    save,

    async insert({ leaseMs, ...run }: NewRun): Promise<RunRow> {
      const [row] = await db
        .insert(runs)
        .values({ ...run, leaseExpiresAt: leaseUntil(leaseMs) })
        .returning(runColumns);
      return row!;
    },

    /** See `createRunStarter` (start-runs.ts). */
    start,

    /** Where the run's messages start. */
    async setFirstSeq(runId: string, firstSeq: number): Promise<RunRow | undefined> {
      const [row] = await db.update(runs).set({ firstSeq }).where(eq(runs.id, runId)).returning(runColumns);
      return row;
    },

    /** Any tenant's: for the run engine, which holds the run. What a client asks for goes through `getOfTenant`. */
    async get(runId: string): Promise<RunRow | undefined> {
      const [row] = await db.select(runColumns).from(runs).where(eq(runs.id, runId));
      return row;
    },

    /**
     * How many runs of the tenant's conversations are open (queued, running or
     * paused), counted after taking the tenant's transaction lock: two
     * instances creating runs for one tenant count one after the other. In a
     * transaction.
     */
    async openOfTenant(tenant: string): Promise<number> {
      await db.execute(sql`select pg_advisory_xact_lock(hashtext(${`loopd_tenant_runs:${tenant}`}))`);
      const [row] = await db
        .select({ n: sql<number>`count(*)`.mapWith(Number) })
        .from(runs)
        .innerJoin(conversations, eq(conversations.id, runs.conversationId))
        .where(and(inArray(runs.status, [...OPEN_RUN_STATUSES]), eq(conversations.tenantId, tenant)));
      return row!.n;
    },

    /** A run whose conversation is the tenant's; another tenant's is not found, as an unknown id is not. */
    async getOfTenant(tenant: string, runId: string): Promise<RunRow | undefined> {
      const [row] = await db
        .select(runColumns)
        .from(runs)
        .innerJoin(conversations, eq(conversations.id, runs.conversationId))
        .where(and(eq(runs.id, runId), eq(conversations.tenantId, tenant)));
      return row;
    },

    async list({
      conversationId,
      limit,
      after,
    }: {
      conversationId: string;
      limit: number;
      after?: Keyset | undefined;
    }) {
      const rows = await db
        .select(runColumns)
        .from(runs)
        .where(and(eq(runs.conversationId, conversationId), olderThan(runs.createdAt, runs.id, after)))
        .orderBy(desc(runs.createdAt), desc(runs.id))
        .limit(limit + 1);
      return pageOf(rows, limit);
    },

    async byIdempotencyKey(conversationId: string, key: string): Promise<RunRow | undefined> {
      const [row] = await db
        .select(runColumns)
        .from(runs)
        .where(and(eq(runs.conversationId, conversationId), eq(runs.idempotencyKey, key)));
      return row;
    },

    async activeOf(conversationId: string): Promise<RunRow | undefined> {
      const [row] = await db
        .select(runColumns)
        .from(runs)
        .where(and(eq(runs.conversationId, conversationId), isRunning));
      return row;
    },

    /** Which models answered the run's steps (a fallback answered some): written before the write that ends or pauses it, by the process holding it. */
    async setModelsUsed(runId: string, owner: string, modelsUsed: ModelUsed[]): Promise<void> {
      await db
        .update(runs)
        .set({ modelsUsed })
        .where(and(eq(runs.id, runId), eq(runs.leaseOwner, owner), isActive));
    },

    /** A child run the run's call started (`agent__<name>`), recorded once per call. */
    async addChild(runId: string, child: Omit<RunChild, "usage">): Promise<void> {
      await db.execute(sql`update runs set children = children || jsonb_build_array(${JSON.stringify(child)}::jsonb)
        where id = ${runId} and not exists (
          select 1 from jsonb_array_elements(runs.children) c where c->>'tool_call_id' = ${child.tool_call_id})`);
    },

    /** A child's end was added to the run's usage (with the call's result): `/usage` takes it out of the run's. */
    async foldChild(runId: string, toolCallId: string, usage: RunUsage): Promise<void> {
      await db.execute(sql`update runs set children = (
          select coalesce(jsonb_agg(case when c->>'tool_call_id' = ${toolCallId}
            then c || jsonb_build_object('usage', ${JSON.stringify(usage)}::jsonb) else c end order by n), '[]'::jsonb)
          from jsonb_array_elements(runs.children) with ordinality as e(c, n))
        where id = ${runId}`);
    },

    /** Updates an active run; a run that already ended is never changed again. */
    async update(runId: string, { ended, ...patch }: RunPatch): Promise<RunRow | undefined> {
      const [row] = await db
        .update(runs)
        .set({
          ...patch,
          ...(patch.error && { error: toPgSafe(patch.error) }),
          ...(ended && { completedAt: sql`now()` }),
        })
        .where(and(eq(runs.id, runId), isActive))
        .returning(runColumns);
      return row;
    },

    ...runLeases(db),

    /**
     * Locks the run if it is paused, waiting for the application (and, with
     * `overdue`, past its deadline); undefined otherwise. With `skipLocked`, a
     * run another transaction holds counts as not there.
     */
    async lockWaiting(
      runId: string,
      { skipLocked = false, overdue = false }: { skipLocked?: boolean; overdue?: boolean } = {},
    ): Promise<RunRow | undefined> {
      const [row] = await db
        .select(runColumns)
        .from(runs)
        .where(
          and(
            eq(runs.id, runId),
            eq(runs.status, "requires_action"),
            overdue ? sql`${runs.actionExpiresAt} < now()` : undefined,
          ),
        )
        .for("update", skipLocked ? { skipLocked } : {});
      return row;
    },

    /** Locks the run if it waits out an outage (`waiting`); undefined otherwise (woken meanwhile, or ended). */
    async lockParked(runId: string): Promise<RunRow | undefined> {
      const [row] = await db
        .select(runColumns)
        .from(runs)
        .where(and(eq(runs.id, runId), eq(runs.status, "waiting")))
        .for("update");
      return row;
    },

    /** A paused run (locked by the caller) goes on: running again, under `owner`'s lease. */
    async resume(runId: string, { owner, leaseMs }: { owner: string; leaseMs: number }): Promise<RunRow> {
      const [row] = await db
        .update(runs)
        .set({
          status: "running",
          requiredAction: null,
          actionExpiresAt: null,
          // The time paused does not count against the run's time budget.
          pausedMs: sql`${runs.pausedMs} + coalesce(round(extract(epoch from now() - ${runs.pausedAt}) * 1000)::integer, 0)`,
          pausedAt: null,
          // A cancel asked for as the run paused was answered by ending the pause; one left over must not stop the resumed run.
          cancelRequested: false,
          leaseOwner: owner,
          leaseExpiresAt: leaseUntil(leaseMs),
        })
        .where(and(eq(runs.id, runId), eq(runs.status, "requires_action")))
        .returning(runColumns);
      return row!;
    },

    /** Ends a paused run, or one waiting out an outage (locked by the caller), without going on. */
    async endWaiting(
      runId: string,
      { status, stopReason }: { status: "incomplete" | "cancelled"; stopReason: string },
    ): Promise<RunRow> {
      const [row] = await db
        .update(runs)
        .set({
          status,
          stopReason,
          requiredAction: null,
          actionExpiresAt: null,
          wakeAt: null,
          giveUpAt: null,
          completedAt: sql`now()`,
        })
        .where(and(eq(runs.id, runId), inArray(runs.status, ["requires_action", "waiting"])))
        .returning(runColumns);
      return row!;
    },

    /** Paused runs whose answer is overdue, oldest deadline first. */
    async overdue(limit: number): Promise<string[]> {
      const rows = await db
        .select({ id: runs.id })
        .from(runs)
        .where(and(eq(runs.status, "requires_action"), sql`${runs.actionExpiresAt} < now()`))
        .orderBy(asc(runs.actionExpiresAt))
        .limit(limit);
      return rows.map((r) => r.id);
    },

    /** How many runs wait for the application (`requires_action`), in the whole database; for /metrics. */
    async countWaiting(): Promise<number> {
      const [row] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(runs)
        .where(eq(runs.status, "requires_action"));
      return row?.n ?? 0;
    },

    /** The paused run of a conversation, locked; undefined when none waits. */
    async lockWaitingOf(conversationId: string): Promise<RunRow | undefined> {
      const [row] = await db
        .select(runColumns)
        .from(runs)
        .where(and(eq(runs.conversationId, conversationId), eq(runs.status, "requires_action")))
        .for("update");
      return row;
    },

    /**
     * Asks an open run to stop (`reason`: `superseded` when a new message
     * interrupts it), under its row lock: the status it has now (a running
     * run may have parked out an outage since it was read), or undefined
     * when it is over or waits for the application.
     */
    async requestCancel(runId: string, reason: "superseded" | null = null): Promise<RunStatus | undefined> {
      const [row] = await db
        .update(runs)
        .set({ cancelRequested: true, cancelReason: reason })
        .where(and(eq(runs.id, runId), inArray(runs.status, [...ACTIVE_RUN_STATUSES, "waiting"])))
        .returning({ status: runs.status });
      return row?.status as RunStatus | undefined;
    },
  };
}

export type RunRepository = ReturnType<typeof createRunRepository>;
