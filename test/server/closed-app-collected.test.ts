import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { collected } from "../support/helpers/collect-garbage.js";
import { startLoopd } from "../support/helpers/start-loopd.js";
import { createTestDatabase, type TestDatabase } from "../support/helpers/test-database.js";

// One process may build and close many apps (an embedder; the test suite, whose files share their workers):
// a closed app must not stay reachable, with its database, from anything that outlives it.
let llm: FakeLlm;
let testDb: TestDatabase;
beforeAll(async () => {
  llm = await startFakeLlm();
  testDb = await createTestDatabase();
});
afterAll(async () => {
  await testDb.drop();
  await llm.close();
});

test("a closed app can be collected, and its database with it", async () => {
  const refs = await (async () => {
    const database = await testDb.open();
    const loopd = await startLoopd({ database, llm, listen: true });
    // Its gauges are read at a scrape: one is made while it runs.
    expect((await loopd.app.inject({ url: "/metrics", remoteAddress: "127.0.0.1" })).statusCode).toBe(200);
    await loopd.close();
    await database.close();
    return { services: new WeakRef(loopd.services), database: new WeakRef(database) };
  })();
  // What the close ended (sockets, a last timer) lets go of it within moments; what outlives it, never.
  for (const ref of [refs.services, refs.database])
    await vi.waitFor(async () => expect(await collected(ref)).toBe(true), { timeout: 10_000, interval: 100 });
});
