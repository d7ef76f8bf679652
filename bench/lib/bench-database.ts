import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { admin } from "../../test/support/helpers/test-database.js";

/** Where one benchmark pass keeps its data: a fresh PGlite folder, or a fresh database on BENCH_DATABASE_URL's server. */
export interface BenchDatabase {
  kind: "pglite" | "postgres";
  /** The database's name on the server (Postgres only), which its backends show in their process titles. */
  name?: string;
  /** Environment that points loopd at it. */
  env: Record<string, string>;
  /** For opening it in this process (after loopd has let go of a PGlite folder). */
  open: { databaseUrl?: string; dataDir?: string };
  /**
   * Vacuums its catalogs (Postgres; nothing on PGlite), as autovacuum has on
   * a database that has been up a while. A fresh one holds the dead catalog
   * rows its schema left (functions replaced, columns added): pruned inside
   * a measured window, each such page logs a full-page image after the
   * window's checkpoint, WAL that is the schema's age, not the subject's work.
   */
  settle(): Promise<void>;
  drop(): Promise<void>;
}

let created = 0;

export async function createBenchDatabase(serverUrl: string | undefined): Promise<BenchDatabase> {
  if (!serverUrl) {
    const dataDir = mkdtempSync(path.join(tmpdir(), "loopd-bench-"));
    return {
      kind: "pglite",
      env: { DATA_DIR: dataDir },
      open: { dataDir },
      settle: async () => {},
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  // Several at once in one run (one per measured subject), so a counter, not only the time.
  const name = `loopd_bench_${process.pid}_${Date.now().toString(36)}_${++created}`;
  await admin(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    kind: "postgres",
    name,
    env: { DATABASE_URL: url.toString() },
    open: { databaseUrl: url.toString() },
    settle: () => vacuumCatalogs(url.toString()),
    drop: () => admin(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

async function vacuumCatalogs(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `select format('%I.%I', n.nspname, c.relname) as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'pg_catalog' and c.relkind = 'r'`,
    );
    for (const { name } of rows) await client.query(`vacuum ${name}`);
  } finally {
    await client.end();
  }
}
