import { and, asc, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import type { Db } from "./db.js";
import { fairDueIds, type ClaimShares } from "./fair-webhook-claim.js";
import { conversations, runs, webhookDeliveries, type WebhookAttempt, type WebhookDeliveryRow } from "./schema.js";

/** A claimed delivery, with the tenant whose run it is. */
export type ClaimedDelivery = WebhookDeliveryRow & { tenant: string };

/** What became of one try: delivered, tried again in `retryInMs`, or given up. */
export type AttemptOutcome = { status: "delivered" } | { status: "pending"; retryInMs: number } | { status: "failed" };

/** The outbox of run webhooks (see `webhookDeliveries`): claimed, tried and recorded by the delivery workers. */
export function createWebhookRepository({ db }: { db: Db }) {
  return {
    /**
     * Up to `limit` pending deliveries that are due, claimed for `leaseMs`
     * (their next try moves past the claim, so no other instance takes them
     * meanwhile, and a process that dies holding them only delays them).
     * Rows another worker is claiming right now are skipped, not waited for.
     * Taken in the fair order of `fairDueIds` (round-robin across tenants,
     * within each receiver host's free places), each with its tenant.
     */
    async claim({
      limit,
      leaseMs,
      shares,
    }: {
      limit: number;
      leaseMs: number;
      shares: ClaimShares;
    }): Promise<ClaimedDelivery[]> {
      return db
        .update(webhookDeliveries)
        .set({ nextAttemptAt: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
        .where(inArray(webhookDeliveries.id, fairDueIds({ limit, shares })))
        .returning({
          ...getTableColumns(webhookDeliveries),
          tenant: sql<string>`(select c.tenant_id from runs r join conversations c on c.id = r.conversation_id where r.id = ${webhookDeliveries.runId})`,
        });
    },

    /** Appends a try to the delivery's attempts, and what follows from it. */
    async record(id: string, attempt: WebhookAttempt, outcome: AttemptOutcome): Promise<void> {
      await db
        .update(webhookDeliveries)
        .set({
          attempts: sql`${webhookDeliveries.attempts} || ${JSON.stringify([attempt])}::jsonb`,
          status: outcome.status,
          ...(outcome.status === "pending" && {
            nextAttemptAt: sql`now() + ${`${outcome.retryInMs} milliseconds`}::interval`,
          }),
        })
        .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, "pending")));
    },

    /** Gives claimed deliveries back untried (a worker stopping): due again at once, for any instance. */
    async release(ids: string[]): Promise<void> {
      if (ids.length === 0) return;
      await db
        .update(webhookDeliveries)
        .set({ nextAttemptAt: sql`now()` })
        .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.status, "pending")));
    },

    /** The deliveries of a run whose conversation is the tenant's, oldest first; another tenant's run has none. */
    async ofRun(tenant: string, runId: string): Promise<WebhookDeliveryRow[]> {
      return db
        .select(getTableColumns(webhookDeliveries))
        .from(webhookDeliveries)
        .innerJoin(runs, eq(runs.id, webhookDeliveries.runId))
        .innerJoin(conversations, eq(conversations.id, runs.conversationId))
        .where(and(eq(webhookDeliveries.runId, runId), eq(conversations.tenantId, tenant)))
        .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id));
    },

    /**
     * Of the pending deliveries: how long the oldest has waited (ms), and
     * how soon the next one is due (ms; 0: now); both null when none is pending.
     */
    async pending(): Promise<{ oldestAgeMs: number | null; nextDueInMs: number | null }> {
      const [row] = await db
        .select({
          oldestAgeMs: sql<
            number | null
          >`(extract(epoch from now() - min(${webhookDeliveries.createdAt})) * 1000)::float8`,
          nextDueInMs: sql<
            number | null
          >`greatest(0, extract(epoch from min(${webhookDeliveries.nextAttemptAt}) - now()) * 1000)::float8`,
        })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.status, "pending"));
      const number = (v: unknown) => (v === null || v === undefined ? null : Number(v));
      return { oldestAgeMs: number(row?.oldestAgeMs), nextDueInMs: number(row?.nextDueInMs) };
    },
  };
}

export type WebhookRepository = ReturnType<typeof createWebhookRepository>;
