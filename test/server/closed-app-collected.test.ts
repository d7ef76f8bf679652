import { afterAll, beforeAll, expect, test } from "vitest";
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
  expect(await collectedWithin(refs.services, 10_000)).toBe(true);
  expect(await collectedWithin(refs.database, 10_000)).toBe(true);
});

async function collectedWithin(ref: WeakRef<object>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await collected(ref))) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}
