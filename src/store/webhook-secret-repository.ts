import { desc, eq, sql } from "drizzle-orm";
import type { Db } from "./db.js";
import { webhookSecrets } from "./schema.js";

/** How long a secret still signs after a rotate replaced it: a receiver has a day to take the new one. */
export const REPLACED_SECRET_SIGNS_HOURS = 24;
/**
 * The most generations a webhook is signed with (the current one and those replaced in the last day): one header,
 * however often a tenant rotates. Past it the oldest stop signing early.
 */
export const MAX_SIGNING_GENERATIONS = 4;

/**
 * Each tenant's webhook secret generations (see `webhookSecrets`): which ones
 * sign now, and the next one made by a rotate. Only numbers are kept; the
 * secrets are derived from them.
 */
export function createWebhookSecretRepository({ db }: { db: Db }) {
  const signing = async (tenant: string): Promise<number[]> => {
    // The newest rows; each one made in the last day keeps the one before it signing.
    const rows = await db
      .select({
        generation: webhookSecrets.generation,
        recent: sql<boolean>`${webhookSecrets.createdAt} > now() - ${`${REPLACED_SECRET_SIGNS_HOURS} hours`}::interval`,
      })
      .from(webhookSecrets)
      .where(eq(webhookSecrets.tenantId, tenant))
      .orderBy(desc(webhookSecrets.generation))
      .limit(MAX_SIGNING_GENERATIONS);
    const current = rows[0]?.generation ?? 0;
    const replaced = rows.filter((r) => r.recent).map((r) => r.generation - 1);
    return [...new Set([current, ...replaced])].slice(0, MAX_SIGNING_GENERATIONS);
  };
  return {
    /** The tenant's generations that sign now, newest (the current one) first. */
    signing,

    /** Makes the tenant's next generation current (the one it replaces signs a day more); its number. */
    async rotate(tenant: string): Promise<number> {
      // Two rotates at once both read the same newest: one inserts, the other finds it taken and goes again.
      for (;;) {
        const next = sql`(select coalesce(max(${webhookSecrets.generation}), 0) + 1 from ${webhookSecrets} where ${webhookSecrets.tenantId} = ${tenant})`;
        const [row] = await db
          .insert(webhookSecrets)
          .values({ tenantId: tenant, generation: next })
          .onConflictDoNothing()
          .returning({ generation: webhookSecrets.generation });
        if (row) return row.generation;
      }
    },
  };
}

export type WebhookSecretRepository = ReturnType<typeof createWebhookSecretRepository>;
