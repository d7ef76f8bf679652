import { Resolver } from "node:dns/promises";

/** Resolves a name, giving up (and freeing what it holds) when `signal` aborts. */
export type HostLookup = (
  host: string,
  options: { signal: AbortSignal },
) => Promise<{ address: string; family: number }[]>;

/** Lookups that share a bound: at most `total` in flight, `perTenant` of them one tenant's. */
export interface LookupPool {
  /** The lookup of `tenant`'s names: it waits for a place within the tenant's share, then asks DNS. */
  of(tenant: string): HostLookup;
}

/**
 * Webhook names are resolved by c-ares (`dns.Resolver`), not `dns.lookup`:
 * a lookup there runs on libuv's small thread pool and cannot be stopped,
 * so names whose DNS never answers held every place until the system
 * resolver gave up. A query here is cancelled at its deadline (its place is
 * free at once), and each tenant has its share of the places, so one
 * tenant's slow names never delay another's. (c-ares reads the servers of
 * /etc/resolv.conf, not /etc/hosts.)
 */
export function createLookupPool({
  servers,
  total,
  perTenant,
  resolve = resolveWithCares,
}: {
  servers: string[];
  total: number;
  perTenant: number;
  resolve?: typeof resolveWithCares;
}): LookupPool {
  let all = 0;
  const ofTenant = new Map<string, number>();
  const waiting: { tenant: string; start: () => void }[] = [];

  const hasRoom = (tenant: string) => all < total && (ofTenant.get(tenant) ?? 0) < perTenant;
  const take = (tenant: string) => (all++, ofTenant.set(tenant, (ofTenant.get(tenant) ?? 0) + 1));
  function release(tenant: string) {
    all--;
    const left = (ofTenant.get(tenant) ?? 1) - 1;
    if (left === 0) ofTenant.delete(tenant);
    else ofTenant.set(tenant, left);
    // The first waiter with room goes: one tenant at its share does not hold up the others behind it.
    for (let i = 0; i < waiting.length && all < total;) {
      const w = waiting[i]!;
      if (hasRoom(w.tenant)) waiting.splice(i, 1)[0]!.start();
      else i++;
    }
  }
  /** A place for `tenant`, now or when one frees; a waiter whose deadline passes leaves the line. */
  function place(tenant: string, signal: AbortSignal): Promise<void> {
    if (hasRoom(tenant)) return Promise.resolve(void take(tenant));
    return new Promise((resolve, reject) => {
      const w = { tenant, start: () => (signal.removeEventListener("abort", gaveUp), take(tenant), resolve()) };
      const gaveUp = () => (waiting.splice(waiting.indexOf(w), 1), reject(signal.reason));
      signal.addEventListener("abort", gaveUp, { once: true });
      waiting.push(w);
    });
  }
  return {
    of:
      (tenant) =>
      async (host, { signal }) => {
        await place(tenant, signal);
        try {
          return await resolve(host, { servers, signal });
        } finally {
          release(tenant);
        }
      },
  };
}

/** A name's IPv4 and IPv6 addresses, from the DNS `servers` (none: the system's), the queries cancelled when `signal` aborts. */
export async function resolveWithCares(
  host: string,
  { servers, signal }: { servers: string[]; signal: AbortSignal },
): Promise<{ address: string; family: number }[]> {
  signal.throwIfAborted();
  // Loopback by definition (RFC 6761), as the system's resolver answers from /etc/hosts.
  if (host === "localhost" || host.endsWith(".localhost"))
    return [
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ];
  const resolver = new Resolver();
  if (servers.length > 0) resolver.setServers(servers);
  const cancel = () => resolver.cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    signal.throwIfAborted();
    const found = [
      ...(v4.status === "fulfilled" ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === "fulfilled" ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (found.length === 0)
      throw v4.status === "rejected"
        ? v4.reason
        : Object.assign(new Error(`${host} has no addresses`), { code: "ENODATA" });
    return found;
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

/** Separate pools: a client waiting on a request-time check never queues behind deliveries' lookups, nor they behind it. */
export interface WebhookLookups {
  checks: LookupPool;
  deliveries: LookupPool;
}

/** Places in flight in all, and of one tenant, for each pool. */
const CHECK_LOOKUPS = { total: 32, perTenant: 4 };
const DELIVERY_LOOKUPS = { total: 16, perTenant: 4 };

const processLookups = new Map<string, WebhookLookups>();

/**
 * This process's pools for the DNS `servers` (sockets, like libuv's threads,
 * are the process's: one pair of pools per server list, shared by the app's
 * checks and the delivery worker).
 */
export function webhookLookupsFor(servers: string[]): WebhookLookups {
  const key = servers.join(",");
  let lookups = processLookups.get(key);
  if (!lookups) {
    lookups = {
      checks: createLookupPool({ servers, ...CHECK_LOOKUPS }),
      deliveries: createLookupPool({ servers, ...DELIVERY_LOOKUPS }),
    };
    processLookups.set(key, lookups);
  }
  return lookups;
}
