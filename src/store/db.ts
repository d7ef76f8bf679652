import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { BusyReportingPool, DatabaseBusyError } from "./busy-reporting-pool.js";
import { countStatements } from "./count-pglite-statements.js";
import { OperatorError } from "../errors.js";
import { makeDirectory } from "../util/make-directory.js";
import { lockDataDir, type DataDirLock } from "./data-dir-lock.js";
import { embeddedFolderOf } from "./embedded-folder.js";
import { schema } from "./schema.js";
import { openPglite, reportFaults } from "./open-pglite.js";

/** Runs one parameterized statement and returns its rows. */
export type RawQuery = (statement: {
  name: string;
  text: string;
  values: unknown[];
}) => Promise<Record<string, unknown>[]>;

/** The drizzle database, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

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
  /** The server's URL when on a real server (LISTEN needs a connection of its own); null when embedded. */
  connectionString: string | null;
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

// src/store and dist/store sit at the same depth, so this resolves in both.
const migrationsFolder = fileURLToPath(new URL("../../migrations", import.meta.url));

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

export interface OpenDatabaseOptions extends DatabasePoolOptions {
  /** `postgres://…`; unset opens the embedded PGlite. */
  databaseUrl?: string | undefined;
  /** Folder of the embedded database, which this process then holds alone (see `lockDataDir`); unset keeps it in memory (tests). */
  dataDir?: string | undefined;
  /** What this process is, for the message another opener of `dataDir` gets. @default "a loopd process" */
  program?: string;
  /** `dataDir` must hold a database already (a command that only reads or exports it): a mistyped folder is an error, not a new database. @default false */
  mustExist?: boolean;
  /**
   * Called once when the embedded database faults (`isDatabaseFault`): it then
   * fails every query until the process restarts, so `serve` logs and exits.
   * @default nothing: the queries fail and /healthz answers 503
   */
  onFault?: (err: Error) => void;
}

export async function openDatabase({
  databaseUrl,
  dataDir,
  poolSize = DEFAULT_POOL.poolSize,
  connectTimeoutMs = DEFAULT_POOL.connectTimeoutMs,
  statementTimeoutMs = DEFAULT_POOL.statementTimeoutMs,
  idleInTransactionTimeoutMs = DEFAULT_POOL.idleInTransactionTimeoutMs,
  onFault,
  program = "a loopd process",
  mustExist = false,
}: OpenDatabaseOptions): Promise<Database> {
  if (databaseUrl) {
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
      statement_timeout: statementTimeoutMs,
      idle_in_transaction_session_timeout: idleInTransactionTimeoutMs,
    });
    // A client's error must not crash the process: an idle one's (server
    // restart), nor a checked-out one's (its session ended by the server for
    // idling in a transaction), which pg emits with no listener of its own.
    // The query in flight, or the next one, reports it.
    pool.on("error", () => {});
    pool.on("connect", (client) => client.on("error", () => {}));
    const pgDb = drizzlePg(pool, { schema });
    return {
      db: pgDb as unknown as Db,
      kind: "postgres",
      connectionString: databaseUrl,
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
      query: async ({ name, text, values }) => (await pool.query({ name, text, values })).rows,
      // On the connection that holds the lock: a pool of one (DB_POOL_SIZE=1) has no second to give.
      migrate: () =>
        holdingAdvisoryLock(pool, MIGRATION_LOCK, (client) =>
          migratePg(drizzlePg(client, { schema }), { migrationsFolder }),
        ),
      ping: () => answers(() => pool.query("select 1")),
      advertise: () => {},
      dumpSql: null,
      close: () => pool.end(),
    };
  }
  let lock: DataDirLock | null = null;
  let folder: string | undefined;
  if (dataDir) {
    if (!mustExist) makeDirectory(dataDir, "DATA_DIR");
    else if (!existsSync(dataDir))
      throw new OperatorError(`there is no embedded database in ${dataDir} (DATA_DIR): the folder does not exist`);
    folder = embeddedFolderOf(dataDir, { mustExist });
    lock = lockDataDir(dataDir, { program });
  }
  const client = await openPglite(dataDir, folder).catch((err: unknown) => {
    lock?.release();
    throw err;
  });
  const counter = countStatements(client);
  if (onFault) reportFaults(client, onFault);
  const pgliteDb = drizzlePglite(client, { schema });
  return {
    db: pgliteDb as unknown as Db,
    kind: "pglite",
    connectionString: null,
    listenEmbedded: async (channel, listener) => {
      const stop = await client.listen(channel, listener);
      return () => stop();
    },
    statements: () => counter.count,
    longestWaitMs: () => counter.longestWaitMs(),
    connections: 1,
    poolUse: () => null,
    // In-process: nothing to save by preparing.
    query: async ({ text, values }) => (await client.query<Record<string, unknown>>(text, values)).rows,
    migrate: () => migratePglite(pgliteDb, { migrationsFolder }),
    ping: () => answers(() => client.query("select 1")),
    advertise: (url) => lock?.advertise(url),
    dumpSql: async () => {
      // Loaded only by the command that exports: it brings a WebAssembly pg_dump of its own.
      const { pgDump } = await import("@electric-sql/pglite-tools/pg_dump");
      const sql = await (await pgDump({ pg: client, args: ["--no-owner", "--no-privileges"] })).text();
      // PGlite is Postgres 17, whose pg_dump sets a parameter that servers before 17 refuse; 0 is its default anyway.
      return sql.replace(/^SET transaction_timeout = 0;\n/m, "");
    },
    close: async () => {
      try {
        await client.close();
      } finally {
        lock?.release();
      }
    },
  };
}

/** An arbitrary key, the same in every loopd: processes starting together migrate one after the other. */
const MIGRATION_LOCK = 0x6c6f6f70; // "loop"

/**
 * Runs `work` while this session holds a Postgres advisory lock. The
 * migrator creates its schema and tables without locks of its own, so two
 * processes migrating a fresh database at once would otherwise collide.
 */
async function holdingAdvisoryLock<T>(
  pool: pg.Pool,
  key: number,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("select pg_advisory_lock($1)", [key]);
    try {
      return await work(client);
    } finally {
      await client.query("select pg_advisory_unlock($1)", [key]);
    }
  } finally {
    client.release();
  }
}

async function answers(query: () => Promise<unknown>): Promise<DatabaseHealth> {
  try {
    await query();
    return "ok";
  } catch (err) {
    return err instanceof DatabaseBusyError ? "busy" : "unreachable";
  }
}
