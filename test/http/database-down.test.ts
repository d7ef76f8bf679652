import { afterAll, beforeAll, expect, test } from "vitest";
import type { Database } from "../../src/store/db.js";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server.js";
import { startLoopd, type TestLoopd } from "../helpers/start-loopd.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

let llm: FakeLlm;
let testDb: TestDatabase;
let database: Database;
let loopd: TestLoopd;

beforeAll(async () => {
  llm = await startFakeLlm();
  testDb = await createTestDatabase();
  database = await testDb.open();
  loopd = await startLoopd({ database, llm });
});
afterAll(async () => {
  await loopd?.close();
  await testDb?.drop();
  await llm?.close();
});

test("with the database gone, healthz and the API answer 503 unavailable without internals", async () => {
  const conv = (await loopd.app.inject({ method: "POST", url: "/conversations" })).json();
  expect((await loopd.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);

  await database.close();

  const health = await loopd.app.inject({ method: "GET", url: "/healthz" });
  expect(health.statusCode).toBe(503);
  expect(health.json().error.code).toBe("unavailable");
  for (const res of [
    await loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}` }),
    await loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/messages`, payload: { content: "hi" } }),
  ]) {
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: { code: "unavailable", message: expect.any(String), details: {} } });
  }
});
