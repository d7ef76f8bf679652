import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { inject } from "vitest";
import { openDatabase, type Database, type DatabasePoolOptions } from "../../../src/store/db.js";
import { copyTemplate } from "./pglite-template.js";

/**
 * A database of the test's own: with TEST_DATABASE_URL, a fresh database
 * created on that server (dropped afterwards), reached through the run's
 * pgbouncer when TEST_DATABASE_POOLER=pgbouncer; without it, an embedded PGlite
 * in a temporary folder. `open` may be called again after closing, to
 * restart on the same data, or while open, for a second pool on Postgres
 * (PGlite has no pool: it ignores `pool`).
 */
export interface TestDatabase {
  kind: "postgres" | "pglite";
  /** What a loopd is given as `DATABASE_URL` (behind the pooler, the pooler's). */
  url: string | undefined;
  /** Behind the pooler, the database itself: `DATABASE_DIRECT_URL`. */
  directUrl?: string | undefined;
  /** PGlite's folder (the `DATA_DIR` a program would be given); undefined on Postgres. */
  dataDir?: string | undefined;
  open(pool?: DatabasePoolOptions): Promise<Database>;
  drop(): Promise<void>;
}

export const testDatabaseKind = process.env.TEST_DATABASE_URL ? "postgres" : "pglite";
/** Whether the Postgres databases are reached through pgbouncer in transaction mode (test/support/helpers/pgbouncer-setup.ts). */
export const behindPooler = process.env.TEST_DATABASE_POOLER === "pgbouncer";

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const dataDir = mkdtempSync(path.join(tmpdir(), "loopd-pglite-"));
    // A copy of the run's migrated template (test/helpers/pglite-template.ts); migrate() then finds nothing to do.
    const template = inject("pgliteTemplate");
    if (template) copyTemplate(template, dataDir);
    return {
      kind: "pglite",
      url: undefined,
      dataDir,
      open: async () => migrated(await openDatabase({ dataDir })),
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `loopd_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await admin(serverUrl, `create database ${name}`);
  const direct = new URL(serverUrl);
  direct.pathname = `/${name}`;
  const port = inject("pgbouncerPort");
  const pooled = new URL(direct);
  if (port !== null) {
    pooled.hostname = "127.0.0.1";
    pooled.port = String(port);
  }
  const url = pooled.toString();
  const directUrl = port === null ? undefined : direct.toString();
  return {
    kind: "postgres",
    url,
    directUrl,
    open: async (pool = {}) => migrated(await openDatabase({ databaseUrl: url, directUrl, poolSize: 5, ...pool })),
    drop: () => admin(serverUrl, `drop database if exists ${name} with (force)`),
  };
}

async function migrated(database: Database): Promise<Database> {
  await database.migrate();
  return database;
}

/** Runs one statement on the server itself (create or drop a database). */
export async function admin(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
