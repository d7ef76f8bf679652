import { sql } from "drizzle-orm";
import type { Db } from "./db.js";

type Rows<T> = { rows: T[] };

/**
 * What every instance on the database counts together: the per-key rate
 * limit's window and each tenant's open streams.
 */
export function createSharedLimitRepository({ db }: { db: Db }) {
  return {
    /**
     * Counts a request of `keyId` in its current window of `windowMs` (a new
     * one begins at the first request after the last ended): the requests in
     * it so far, this one included, and the time left in it.
     */
    async hit(keyId: string, windowMs: number): Promise<{ current: number; ttlMs: number }> {
      const seconds = windowMs / 1000;
      const result = (await db.execute(sql`
        insert into rate_limit_windows as w (key_id, started_at, hits) values (${keyId}, now(), 1)
        on conflict (key_id) do update set
          hits = case when w.started_at > now() - make_interval(secs => ${seconds}) then w.hits + 1 else 1 end,
          started_at = case when w.started_at > now() - make_interval(secs => ${seconds}) then w.started_at else now() end
        returning hits,
          greatest(0, extract(epoch from (started_at + make_interval(secs => ${seconds}) - now())) * 1000)::float8 as ttl_ms`)) as unknown as Rows<{
        hits: number;
        ttl_ms: number;
      }>;
      const row = result.rows[0]!;
      // started_at keeps milliseconds (rounded, possibly up from now()): never more than the window.
      return { current: Number(row.hits), ttlMs: Math.min(windowMs, Math.ceil(Number(row.ttl_ms))) };
    },

    /**
     * Publishes the streams `instanceId` holds open per tenant (replacing what
     * it published before), forgets instances silent for a minute, and
     * answers the streams every other instance seen within `freshMs` holds per tenant.
     */
    async publishStreams(instanceId: string, held: Map<string, number>, freshMs: number): Promise<Map<string, number>> {
      const tenants = [...held.keys()];
      const counts = tenants.map((t) => held.get(t)!);
      return db.transaction(async (tx) => {
        await tx.execute(
          sql`delete from open_streams where (instance_id = ${instanceId} and not (tenant_id = any(${sql.param(tenants)}::text[]))) or seen_at < now() - interval '1 minute'`,
        );
        if (tenants.length > 0)
          await tx.execute(sql`
            insert into open_streams (instance_id, tenant_id, streams, seen_at)
            select ${instanceId}, t, n, now() from unnest(${sql.param(tenants)}::text[], ${sql.param(counts)}::int[]) as u(t, n)
            on conflict (instance_id, tenant_id) do update set streams = excluded.streams, seen_at = excluded.seen_at`);
        else await tx.execute(sql`update open_streams set seen_at = now() where instance_id = ${instanceId}`);
        const others = (await tx.execute(sql`
          select tenant_id, sum(streams)::int as n from open_streams
          where instance_id <> ${instanceId} and seen_at > now() - make_interval(secs => ${freshMs / 1000})
          group by tenant_id`)) as unknown as Rows<{ tenant_id: string; n: number }>;
        return new Map(others.rows.map((r) => [r.tenant_id, Number(r.n)]));
      });
    },

    /** Takes back what `instanceId` published (it stops). */
    async dropStreams(instanceId: string): Promise<void> {
      await db.execute(sql`delete from open_streams where instance_id = ${instanceId}`);
    },
  };
}
