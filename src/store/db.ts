import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { findInCauseChain } from "../errors.js";
import { schema } from "./schema.js";

/** The drizzle database, whichever driver is underneath. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface Database {
  db: Db;
  kind: "pglite" | "postgres";
  /** Applies the committed migrations in `migrations/`. */
  migrate(): Promise<void>;
  /** Answers whether the database responds; used by /healthz. */
  ping(): Promise<boolean>;
  /** The server's URL when on a real server (LISTEN needs a connection of its own); null when embedded. */
  connectionString: string | null;
  close(): Promise<void>;
}

// src/store and dist/store sit at the same depth, so this resolves in both.
const migrationsFolder = fileURLToPath(new URL("../../migrations", import.meta.url));

export interface OpenDatabaseOptions {
  /** `postgres://…`; unset opens the embedded PGlite. */
  databaseUrl?: string | undefined;
  /** Folder of the embedded database; unset keeps it in memory (tests). */
  dataDir?: string | undefined;
  /** @default 10 */
  poolSize?: number;
  /**
   * Called once when the embedded database faults (`isDatabaseFault`): it then
   * fails every query until the process restarts, so `main` logs and exits.
   * @default nothing: the queries fail and /healthz answers 503
   */
  onFault?: (err: Error) => void;
}

export async function openDatabase({ databaseUrl, dataDir, poolSize = 10, onFault }: OpenDatabaseOptions): Promise<Database> {
  if (databaseUrl) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
    // An idle client's error (server restart) must not crash the process; the next query reports it.
    pool.on("error", () => {});
    const pgDb = drizzlePg(pool, { schema });
    return {
      db: pgDb as unknown as Db,
      kind: "postgres",
      connectionString: databaseUrl,
      migrate: () => migratePg(pgDb, { migrationsFolder }),
      ping: () => answers(() => pool.query("select 1")),
      close: () => pool.end(),
    };
  }
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create(dataDir ? { dataDir } : {});
  if (onFault) reportFaults(client, onFault);
  const pgliteDb = drizzlePglite(client, { schema });
  return {
    db: pgliteDb as unknown as Db,
    kind: "pglite",
    connectionString: null,
    migrate: () => migratePglite(pgliteDb, { migrationsFolder }),
    ping: () => answers(() => client.query("select 1")),
    close: () => client.close(),
  };
}

async function answers(query: () => Promise<unknown>): Promise<boolean> {
  try {
    await query();
    return true;
  } catch {
    return false;
  }
}

/**
 * A WebAssembly trap inside PGlite (memory access out of bounds, an abort):
 * its memory is corrupt and no query will succeed again in this process.
 */
export function isDatabaseFault(err: unknown): boolean {
  return findInCauseChain(err, (e) => (e instanceof WasmRuntimeError ? true : undefined)) ?? false;
}

// @types/node declares WebAssembly's types but not the global itself.
const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: ErrorConstructor } }).WebAssembly.RuntimeError;

/** Every way drizzle, the migrator and `ping` reach PGlite; a transaction's own queries surface through `transaction`. */
function reportFaults(client: PGlite, onFault: (err: Error) => void): void {
  let reported = false;
  const watch =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (err) {
        if (!reported && isDatabaseFault(err)) {
          reported = true;
          onFault(err as Error);
        }
        throw err;
      }
    };
  client.query = watch(client.query.bind(client)) as PGlite["query"];
  client.exec = watch(client.exec.bind(client));
  client.transaction = watch(client.transaction.bind(client)) as PGlite["transaction"];
}
