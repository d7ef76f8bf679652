import { readMigrationFiles } from "drizzle-orm/migrator";
import { fileURLToPath } from "node:url";
import type pg from "pg";

// src/store and dist/store sit at the same depth, so this resolves in both.
export const migrationsFolder = fileURLToPath(new URL("../../migrations", import.meta.url));

/** An arbitrary key, the same in every loopd: processes starting together migrate one after the other. */
const MIGRATION_LOCK = 0x6c6f6f70; // "loop"

/**
 * drizzle's migrations (its table `drizzle.__drizzle_migrations`, the same
 * rows drizzle's migrator writes) applied in one transaction that holds a
 * transaction-scoped advisory lock from its first statement: processes
 * starting together on a fresh database migrate one after the other, and
 * nothing outlives the transaction, so it works through a transaction-mode
 * pooler too (a session lock there would stay on whichever server
 * connection took it).
 */
export async function migrateInOneTransaction(client: pg.Client): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder });
  await client.query("begin");
  try {
    await client.query("select pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query("create schema if not exists drizzle");
    await client.query(
      "create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)",
    );
    const { rows } = await client.query<{ created_at: string }>(
      "select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1",
    );
    const last = rows[0] ? Number(rows[0].created_at) : null;
    for (const migration of migrations) {
      if (last !== null && last >= migration.folderMillis) continue;
      for (const statement of migration.sql) await client.query(statement);
      await client.query('insert into drizzle.__drizzle_migrations ("hash", "created_at") values ($1, $2)', [
        migration.hash,
        migration.folderMillis,
      ]);
    }
    await client.query("commit");
  } catch (err) {
    await client.query("rollback").catch(() => {});
    throw err;
  }
}
