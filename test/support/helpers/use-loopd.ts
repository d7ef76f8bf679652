import { afterAll, beforeAll, beforeEach } from "vitest";
import type { Database, DatabasePoolOptions } from "../../../src/store/db.js";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server.js";
import { startLoopd, type TestLoopd } from "./start-loopd.js";
import { createTestDatabase, type TestDatabase } from "./test-database.js";

type StartOptions = Omit<Parameters<typeof startLoopd>[0], "database" | "llm"> & {
  /** The limits of the database's pool (Postgres only). */
  pool?: DatabasePoolOptions;
};

export interface LoopdFixture {
  llm: FakeLlm;
  testDb: TestDatabase;
  database: Database;
  loopd: TestLoopd;
  /** Stops loopd and the database, then starts both again on the same data. */
  restart(): Promise<void>;
}

/**
 * A test file's loopd: the fake LLM server, a database of the file's own and
 * loopd on it, started before the tests and torn down after them; the fake's
 * script and recorded requests are cleared before each test.
 */
export function useLoopd(options: StartOptions | (() => StartOptions) = {}): LoopdFixture {
  const optionsOf = () => (typeof options === "function" ? options() : options);
  const fixture = {} as LoopdFixture;
  let databaseOpen = false;
  const open = async () => {
    const { pool, ...start } = optionsOf();
    fixture.database = await fixture.testDb.open(pool);
    databaseOpen = true;
    fixture.loopd = await startLoopd({ database: fixture.database, llm: fixture.llm, ...start });
  };
  const stop = async () => {
    await fixture.loopd?.close();
    if (databaseOpen) await fixture.database.close().catch(() => {});
    databaseOpen = false;
  };
  fixture.restart = async () => {
    await stop();
    await open();
  };
  beforeAll(async () => {
    fixture.llm = await startFakeLlm();
    fixture.testDb = await createTestDatabase();
    await open();
  });
  afterAll(async () => {
    await stop();
    await fixture.testDb?.drop();
    await fixture.llm?.close();
  });
  beforeEach(() => fixture.llm.reset());
  return fixture;
}
