import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
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
}

export async function openDatabase({ databaseUrl, dataDir, poolSize = 10 }: OpenDatabaseOptions): Promise<Database> {
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
