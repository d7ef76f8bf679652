import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { testDatabaseKind } from "./test-database.js";

/**
 * A session of the test's own on its file's Postgres database, for what
 * another process would do meanwhile (hold a row, write, delete); connected
 * in the Postgres pass only. `url` is read once the file's database exists.
 */
export function usePostgresSession(url: () => string | undefined): { readonly db: pg.Client } {
  const session = { db: undefined as unknown as pg.Client };
  beforeAll(async () => {
    if (testDatabaseKind !== "postgres") return;
    session.db = new pg.Client({ connectionString: url() });
    await session.db.connect();
  });
  afterAll(async () => session.db?.end());
  return session;
}
