import { existsSync } from "node:fs";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { healthOf } from "./busy-reporting-pool.js";
import { countStatements } from "./count-pglite-statements.js";
import { OperatorError } from "../errors.js";
import { makeDirectory } from "../util/make-directory.js";
import { lockDataDir, type DataDirLock } from "./data-dir-lock.js";
import { embeddedFolderOf } from "./embedded-folder.js";
import { schema } from "./schema.js";
import { openPglite, reportFaults } from "./open-pglite.js";
import { migrationsFolder } from "./migrate-postgres.js";
import { openPostgres } from "./open-postgres.js";

export type {
  Database,
  DatabaseHealth,
  DatabasePoolOptions,
  Db,
  PoolUse,
  RawQuery,
  ServerPath,
} from "./database-types.js";
import { DEFAULT_POOL, type Database, type DatabasePoolOptions, type Db } from "./database-types.js";
export { DEFAULT_POOL };

export interface OpenDatabaseOptions extends DatabasePoolOptions {
  /** `postgres://…`; unset opens the embedded PGlite. */
  databaseUrl?: string | undefined;
  /** A direct (or session-mode) connection to the same database, for migrations and LISTEN only (`DATABASE_DIRECT_URL`). */
  directUrl?: string | undefined;
  /** How long a NOTIFY through `databaseUrl` may take to come back before LISTEN is taken as not delivered. @default 2000 */
  listenProbeMs?: number;
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
  directUrl,
  listenProbeMs,
  onFault,
  program = "a loopd process",
  mustExist = false,
}: OpenDatabaseOptions): Promise<Database> {
  if (databaseUrl) {
    return openPostgres({
      databaseUrl,
      directUrl,
      poolSize,
      connectTimeoutMs,
      statementTimeoutMs,
      idleInTransactionTimeoutMs,
      ...(listenProbeMs !== undefined && { listenProbeMs }),
    });
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
    listenUrl: null,
    serverPath: null,
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
    ping: () => healthOf(() => client.query("select 1")),
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
