import { sql, type SQL } from "drizzle-orm";

/**
 * A webhook URL's receiver, as the delivery shares count it: its authority
 * (host and port) without user info, lowercased. The claim applies the same
 * two patterns in SQL, so the hosts a worker counts and the hosts the claim
 * holds back are one key.
 */
const AUTHORITY_PATTERN = "^[^:]+://([^/?#]*)";
const USER_INFO_PATTERN = "^.*@";
const authority = new RegExp(AUTHORITY_PATTERN);
const userInfo = new RegExp(USER_INFO_PATTERN);

export const receiverHostOf = (url: string): string =>
  (authority.exec(url)?.[1] ?? "").replace(userInfo, "").toLowerCase();

/** What this instance already has in flight, so a claim takes the fair next deliveries. */
export interface ClaimShares {
  /** Tries in flight per receiver host (a paused host counts as full: `perHost`). */
  hosts: Record<string, number>;
  /** Tries in flight per tenant. */
  tenants: Record<string, number>;
  /** The most tries in flight to one host. */
  perHost: number;
}

/**
 * The ids of up to `limit` due pending deliveries, locked (SKIP LOCKED), in
 * a fair order: round-robin across tenants (each tenant's oldest due first,
 * a tenant with tries in flight behind those with fewer), and no more per
 * receiver host than its free places. The due rows are found through the
 * partial index on pending deliveries; the tenant is the run's
 * conversation's (primary-key joins).
 */
export function fairDueIds({ limit, shares }: { limit: number; shares: ClaimShares }): SQL {
  const host = sql`lower(regexp_replace(substring(d.url from ${AUTHORITY_PATTERN}), ${USER_INFO_PATTERN}, ''))`;
  const hosts = JSON.stringify(shares.hosts);
  const tenants = JSON.stringify(shares.tenants);
  return sql`(select l.id from webhook_deliveries l where l.id in (
      select due.id from (
        select d.id, d.next_attempt_at, c.tenant_id,
          row_number() over (partition by c.tenant_id order by d.next_attempt_at, d.id) as turn,
          row_number() over (partition by ${host} order by d.next_attempt_at, d.id) + coalesce((${hosts}::jsonb ->> ${host})::int, 0) as of_host
        from webhook_deliveries d
        join runs r on r.id = d.run_id
        join conversations c on c.id = r.conversation_id
        where d.status = 'pending' and d.next_attempt_at <= now()
      ) due
      where due.of_host <= ${shares.perHost}
      order by due.turn + coalesce((${tenants}::jsonb ->> due.tenant_id)::int, 0), due.next_attempt_at, due.id
      limit ${limit})
    and l.status = 'pending' and l.next_attempt_at <= now()
    for update skip locked)`;
}
