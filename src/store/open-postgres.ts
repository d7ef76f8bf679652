import { randomBytes } from "node:crypto";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import pg from "pg";
import { BusyReportingPool, healthOf } from "./busy-reporting-pool.js";
import type { Database, DatabasePoolOptions, ServerPath } from "./database-types.js";
import { migrateInOneTransaction } from "./migrate-postgres.js";
import { schema } from "./schema.js";

export interface OpenPostgresOptions extends Required<DatabasePoolOptions> {
  databaseUrl: string;
  /** A direct (or session-mode) connection for migrations and `LISTEN` only. */
  directUrl?: string | undefined;
  /** How long a NOTIFY through `DATABASE_URL` may take to come back before loopd decides LISTEN is not delivered. @default 2000 */
  listenProbeMs?: number;
}

/**
 * The pool on a Postgres server, usable behind a transaction-mode pooler
 * (pgbouncer `pool_mode=transaction`): nothing on `DATABASE_URL` outlives a
 * transaction. No session advisory lock (migrations take a transaction's),
 * no named prepared statement once it is known to be pooled, no `LISTEN`
 * unless a NOTIFY through it comes back, no `SET`.
 */
export async function openPostgres({
  databaseUrl,
  directUrl,
  poolSize,
  connectTimeoutMs,
  statementTimeoutMs,
  idleInTransactionTimeoutMs,
  listenProbeMs = 2_000,
}: OpenPostgresOptions): Promise<Database> {
  const sessionParameters = {
    statement_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout: idleInTransactionTimeoutMs,
  };
  const { client: probe, refusedStartupParameters } = await probeConnection(
    databaseUrl,
    sessionParameters,
    connectTimeoutMs,
  );
  let statements = 0;
  // Counted at the driver, below drizzle: exactly what goes to the server.
  class CountingClient extends pg.Client {
    override query(...args: unknown[]): never {
      statements++;
      return (super.query as (...a: unknown[]) => never)(...args);
    }
  }
  const pool = new BusyReportingPool({
    Client: CountingClient,
    connectionString: databaseUrl,
    max: poolSize,
    connectionTimeoutMillis: connectTimeoutMs,
    // A pooler that refuses them gets none; the server's own settings (ALTER ROLE … SET) apply, and each query is bounded here.
    ...(refusedStartupParameters
      ? statementTimeoutMs > 0 && { query_timeout: statementTimeoutMs + connectTimeoutMs }
      : sessionParameters),
  });
  // A client's error must not crash the process: an idle one's (server
  // restart), nor a checked-out one's (its session ended by the server for
  // idling in a transaction), which pg emits with no listener of its own.
  // The query in flight, or the next one, reports it.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));

  let listenUrl: string | null = directUrl ?? databaseUrl;
  let pooled = directUrl !== undefined || refusedStartupParameters;
  if (!directUrl && probe) {
    const delivered = await notifyComesBack(probe, pool, listenProbeMs).catch(() => false);
    if (!delivered) {
      listenUrl = null;
      pooled = true;
    }
  }
  await probe?.end().catch(() => {});
  const path: ServerPath = { refusedStartupParameters, pooled };

  return {
    db: drizzlePg(pool, { schema }) as unknown as Database["db"],
    kind: "postgres",
    serverPath: path,
    connectionString: databaseUrl,
    listenUrl,
    listenEmbedded: null,
    statements: () => statements,
    longestWaitMs: () => pool.longestWaitMs(),
    connections: poolSize,
    poolUse: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      acquired: pool.acquired,
      waitedMs: pool.waitedMs,
    }),
    query: async ({ name, text, values }) => {
      if (path.pooled) return (await pool.query({ text, values })).rows;
      try {
        return (await pool.query({ name, text, values })).rows;
      } catch (err) {
        // A pooler that gave this statement's prepared name to another session (or none): never name one again.
        if (!isPreparedStatementMixUp(err)) throw err;
        path.pooled = true;
        return (await pool.query({ text, values })).rows;
      }
    },
    migrate: () => withClient(directUrl ?? databaseUrl, connectTimeoutMs, migrateInOneTransaction),
    ping: () => healthOf(() => pool.query("select 1")),
    advertise: () => {},
    dumpSql: null,
    close: () => pool.end(),
  };
}

/**
 * A connection as the pool will open them, and whether the server (a
 * pooler) refuses the session's startup parameters (then a connection
 * without them); no client when it cannot be reached now (the pool reports
 * that when it is used).
 */
async function probeConnection(
  url: string,
  parameters: Record<string, number>,
  connectTimeoutMs: number,
): Promise<{ client: pg.Client | null; refusedStartupParameters: boolean }> {
  const connectWith = async (extra: Record<string, number>) => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs, ...extra });
    client.on("error", () => {});
    await client.connect();
    return client;
  };
  try {
    return { client: await connectWith(parameters), refusedStartupParameters: false };
  } catch (err) {
    if (!/unsupported startup parameter/i.test((err as Error).message))
      return { client: null, refusedStartupParameters: false };
  }
  return { client: await connectWith({}).catch(() => null), refusedStartupParameters: true };
}

/** Whether a NOTIFY sent through the pool reaches `client`'s LISTEN (it does not through a transaction-mode pooler). */
async function notifyComesBack(client: pg.Client, pool: pg.Pool, boundMs: number) {
  const channel = `loopd_probe_${randomBytes(6).toString("hex")}`;
  const heard = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), boundMs);
    client.on("notification", (n) => {
      if (n.channel !== channel) return;
      clearTimeout(timer);
      resolve(true);
    });
  });
  await client.query(`listen ${channel}`);
  await pool.query("select pg_notify($1, 'probe')", [channel]);
  return heard;
}

async function withClient<T>(url: string, connectTimeoutMs: number, work: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  client.on("error", () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** `prepared statement "…" does not exist` (26000) or `… already exists` (42P05): named statements meeting a pooler. */
function isPreparedStatementMixUp(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === "26000" || code === "42P05";
}
