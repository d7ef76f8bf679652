import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase, type Database } from "../../src/store/db.js";
import { createTestDatabase, testDatabaseKind, type TestDatabase } from "../support/helpers/test-database.js";

/**
 * A database for loopd processes of a test file: a fresh one on the test
 * Postgres server, or an embedded one in a folder of its own. `env` is what
 * a process is started with to use it; `open` reads it from the test itself
 * (on the embedded database, only while no process holds it).
 */
export async function createProcessDatabase(
  prefix: string,
): Promise<{ env: Record<string, string>; open(): Promise<Database>; drop(): Promise<void> }> {
  if (testDatabaseKind === "postgres") {
    const testDb: TestDatabase = await createTestDatabase();
    const env = { DATABASE_URL: testDb.url!, ...(testDb.directUrl && { DATABASE_DIRECT_URL: testDb.directUrl }) };
    return { env, open: () => testDb.open(), drop: () => testDb.drop() };
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), prefix));
  return {
    env: { DATA_DIR: dataDir },
    open: () => openDatabase({ dataDir }),
    drop: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}
