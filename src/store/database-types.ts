import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type { schema } from "./schema.js";

/** Runs one parameterized statement and returns its rows. */
export type RawQuery = (statement: {
  name: string;
  text: string;
  values: unknown[];
}) => Promise<Record<string, unknown>[]>;

/** The drizzle database, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/** What a server's `DATABASE_URL` turned out to be when loopd opened it (see `openPostgres`). */
export interface ServerPath {
  /** It is (or may be) a transaction-mode pooler: `DATABASE_DIRECT_URL` is set, a NOTIFY through it did not come back, or it refused the session's startup parameters. Then no named prepared statement goes to it. */
  pooled: boolean;
  /** It refused `statement_timeout` and `idle_in_transaction_session_timeout` as startup parameters (pgbouncer): they are not sent. */
  refusedStartupParameters: boolean;
}

export interface Database {
  db: Db;
  kind: "pglite" | "postgres";
  /** Applies the committed migrations in `migrations/`. */
  migrate(): Promise<void>;
  /** Answers whether the database responds; used by /healthz. */
  ping(): Promise<DatabaseHealth>;
  /**
   * Statements sent to the database so far (transaction control included),
   * for tests and the bench to count the cost of an operation.
   */
  statements(): number;
  /**
   * One statement by its text, bypassing drizzle, for the hot path: on a
   * server, prepared once per connection under `name` and executed by name after.
   */
  query: RawQuery;
  /**
   * How long the statement waiting longest for the database has waited so
   * far (ms): for a pooled connection on a server, for its turn (and its
   * run) in the embedded one; 0 when none waits. What admission control reads.
   */
  longestWaitMs(): number;
  /** How many statements can run at once: the pool's size on a server, 1 embedded. */
  connections: number;
  /** The pool's connections right now, when on a server (/metrics); null when embedded, which has no pool. */
  poolUse(): PoolUse | null;
  /** The server's URL when on a real server; null when embedded. */
  connectionString: string | null;
  /**
   * Where LISTEN goes on a server (a connection of its own): `DATABASE_DIRECT_URL`,
   * else `DATABASE_URL` when a NOTIFY through it was seen to come back; null when
   * embedded, or when nothing is delivered (a transaction-mode pooler): then loopd polls.
   */
  listenUrl: string | null;
  /** On a server, what `DATABASE_URL` turned out to be (said once in the log at start); null when embedded. */
  serverPath: ServerPath | null;
  /**
   * Embedded only: hears the NOTIFYs on `channel` of this process's own
   * transactions (a trigger's), when they commit. Null on a server, where
   * `createBroadcast` listens on a connection of its own. Resolves with
   * what stops it.
   */
  listenEmbedded: ((channel: string, listener: (payload: string) => void) => Promise<() => Promise<void>>) | null;
  /** Tells whoever finds the embedded folder held where this process serves (nothing on a server). */
  advertise(url: string): void;
  /**
   * The whole embedded database as SQL (pg_dump's plain format, without
   * owners or privileges), to load into a Postgres server; null on a server,
   * which has pg_dump of its own.
   */
  dumpSql: (() => Promise<string>) | null;
  close(): Promise<void>;
}

/** Whether the database answers: `busy` when every pooled connection stayed in use (the server is up, loopd is busy). */
export type DatabaseHealth = "ok" | "busy" | "unreachable";

export interface PoolUse {
  /** Connections open, busy or idle. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  /** Connections handed out since the start, and how long their askers waited for them in all (ms). */
  acquired: number;
  waitedMs: number;
}

/**
 * The limits of the connection pool to a Postgres server, so that a saturated
 * pool or a stuck query answers 503 instead of holding requests forever. The
 * embedded PGlite is one connection in the process and has none of them.
 */
export interface DatabasePoolOptions {
  /** @default 10 */
  poolSize?: number;
  /** How long a query waits for a connection (a free one, or a new one opening) before it fails. @default 5000 */
  connectTimeoutMs?: number;
  /** The server cancels a statement that runs longer; 0 lets it run. @default 30000 */
  statementTimeoutMs?: number;
  /** The server ends a session left idle inside a transaction for longer (its locks go with it); 0 never. @default 60000 */
  idleInTransactionTimeoutMs?: number;
}

export const DEFAULT_POOL: Required<DatabasePoolOptions> = {
  poolSize: 10,
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 60_000,
};
