import type { Pgbouncer } from "../../test/support/helpers/pgbouncer.js";
import { createBenchDatabase, type BenchDatabase } from "../lib/bench-database.js";
import { openDatabaseWal, type DatabaseWal } from "../lib/database-wal.js";
import { startPgWireCounter, type PgWireCounter, type WireCounts } from "../lib/pg-wire-counter.js";
import { startLoopdProcess, type LoopdProcess } from "../lib/start-loopd-process.js";
import { startRoundRobinProxy, type RoundRobinProxy } from "../streams/round-robin-proxy.js";

/** Straight to Postgres; through pgbouncer with DATABASE_DIRECT_URL for LISTEN; through pgbouncer without it (polling). */
export type Via = "direct" | "pgbouncer" | "pgbouncer, polling";

/**
 * The statements of an instance's own upkeep, told apart by their text (as
 * drizzle writes them: src/store/run-leases.ts, shared-limit-repository.ts).
 */
export const UPKEEP_KINDS = {
  /** keepLeases: one statement a second for all the runs an instance holds. */
  leaseRenewals: /^update "runs" set "lease_expires_at" = now\(\) \+/,
  /** The sweeper claiming lapsed leases (a dead instance's runs). */
  takeovers: /^update "runs" set "lease_owner" = /,
  /** The per-tenant stream share each instance publishes. */
  streamShare: /open_streams/,
};

/** One loopd process and the relays in front of what it connects to, counting what it sends and hears. */
export interface Instance {
  loopd: LoopdProcess;
  /** On `DATABASE_URL`, and on `DATABASE_DIRECT_URL` where there is one (LISTEN). */
  wires: PgWireCounter[];
  /** Its counts summed over its relays. */
  counts(): WireCounts;
}

/** N loopd instances on one database of their own, behind a round-robin proxy, directly or through pgbouncer. */
export interface Fleet {
  via: Via;
  database: BenchDatabase & { name: string };
  wal: DatabaseWal | null;
  instances: Instance[];
  proxy: RoundRobinProxy;
  /** Which instance (its URL) each request went to, by the request's path, the latest kept. */
  routes: Map<string, string>;
  stop(): Promise<void>;
}

/**
 * Starts `count` loopd processes (built, as production runs them) on a fresh
 * database of `serverUrl`'s server: `direct`, each `DATABASE_URL` straight to
 * Postgres (LISTEN on it); `pgbouncer`, through the pooler in transaction
 * mode with `DATABASE_DIRECT_URL` for LISTEN and migrations; `pgbouncer,
 * polling`, through it without (LISTEN not delivered). Each connection
 * goes through a wire counter of the instance's own, so traffic is known per
 * instance.
 */
export async function startFleet({
  serverUrl,
  via,
  count,
  bouncer,
  env,
}: {
  serverUrl: string;
  via: Via;
  count: number;
  bouncer: Pgbouncer;
  env: Record<string, string>;
}): Promise<Fleet> {
  const database = (await createBenchDatabase(serverUrl)) as Fleet["database"];
  const direct = database.open.databaseUrl!;
  const instances: Instance[] = [];
  let proxy: RoundRobinProxy | null = null;
  const stopAll = async () => {
    await proxy?.close();
    for (const { loopd, wires } of instances) {
      await loopd.stop();
      for (const wire of wires) await wire.close();
    }
  };
  try {
    const wal = await openDatabaseWal(direct);
    // One after the other: the first migrates the database.
    for (let i = 0; i < count; i++) {
      const wires = [
        await startPgWireCounter(via === "direct" ? direct : bouncer.urlOf(direct), { kinds: UPKEEP_KINDS }),
      ];
      if (via === "pgbouncer") wires.push(await startPgWireCounter(direct, { kinds: UPKEEP_KINDS }));
      const loopd = await startLoopdProcess({
        env: {
          ...env,
          DATABASE_URL: wires[0]!.url,
          ...(wires[1] && { DATABASE_DIRECT_URL: wires[1].url }),
        },
      }).catch(async (err: unknown) => {
        for (const wire of wires) await wire.close();
        throw err;
      });
      instances.push({ loopd, wires, counts: () => sumCounts(wires.map((w) => w.counts())) });
    }
    const routes = new Map<string, string>();
    proxy = await startRoundRobinProxy(
      instances.map((i) => i.loopd.url),
      { onForward: ({ url }, target) => void routes.set(url, target) },
    );
    return {
      via,
      database,
      wal,
      instances,
      proxy,
      routes,
      async stop() {
        await stopAll();
        await wal?.close();
        await database.drop();
      },
    };
  } catch (err) {
    await stopAll();
    await database.drop();
    throw err;
  }
}

/** Several relays' counts as one. */
export function sumCounts(all: WireCounts[]): WireCounts {
  const zero: WireCounts = { statements: 0, roundTrips: 0, transactions: 0, notifications: 0, kinds: {} };
  return all.reduce(
    (sum, c) => ({
      statements: sum.statements + c.statements,
      roundTrips: sum.roundTrips + c.roundTrips,
      transactions: sum.transactions + c.transactions,
      notifications: sum.notifications + c.notifications,
      kinds: Object.fromEntries(
        Object.keys({ ...sum.kinds, ...c.kinds }).map((k) => [k, (sum.kinds[k] ?? 0) + (c.kinds[k] ?? 0)]),
      ),
    }),
    zero,
  );
}
