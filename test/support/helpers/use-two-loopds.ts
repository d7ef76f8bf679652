import { afterAll, beforeAll, beforeEach } from "vitest";
import type { Database } from "../../../src/store/db.js";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server.js";
import { startLoopd, type TestLoopd } from "./start-loopd.js";
import { createTestDatabase, type TestDatabase } from "./test-database.js";

type StartOptions = Omit<Parameters<typeof startLoopd>[0], "database" | "llm" | "listen" | "instanceId">;

export interface TwoLoopds {
  llm: FakeLlm;
  testDb: TestDatabase;
  database: Database;
  /** `instance-a`, listening. */
  loopd: TestLoopd;
  /** A second loopd process on the same database (same PGlite instance, or its own pool on Postgres): `instance-b`, listening. */
  other: TestLoopd;
}

/**
 * A test file's two loopds on one database of its own, with the fake LLM
 * server: started before its tests, torn down after them; the fake's script
 * and recorded requests are cleared before each test.
 */
export function useTwoLoopds(options: StartOptions | (() => StartOptions) = {}): TwoLoopds {
  const f = {} as TwoLoopds;
  let secondDatabase: Database | undefined;
  beforeAll(async () => {
    const start = typeof options === "function" ? options() : options;
    f.llm = await startFakeLlm();
    f.testDb = await createTestDatabase();
    f.database = await f.testDb.open();
    secondDatabase = f.testDb.kind === "postgres" ? await f.testDb.open() : f.database;
    f.loopd = await startLoopd({ ...start, database: f.database, llm: f.llm, listen: true, instanceId: "instance-a" });
    f.other = await startLoopd({
      ...start,
      database: secondDatabase,
      llm: f.llm,
      listen: true,
      instanceId: "instance-b",
    });
  });
  afterAll(async () => {
    await f.loopd?.close();
    await f.other?.close();
    if (secondDatabase !== f.database) await secondDatabase?.close();
    await f.database?.close();
    await f.testDb?.drop();
    await f.llm?.close();
  });
  beforeEach(() => f.llm.reset());
  return f;
}
