import { afterAll, beforeAll, expect, test } from "vitest";
import type { Database } from "../../src/store/db.js";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { lagEventLoop } from "../support/helpers/lag-event-loop.js";
import { startLoopd, type TestLoopd } from "../support/helpers/start-loopd.js";
import { createTestDatabase, type TestDatabase } from "../support/helpers/test-database.js";

let llm: FakeLlm;
let testDb: TestDatabase;
let database: Database;
let loopd: TestLoopd | undefined;

beforeAll(async () => {
  llm = await startFakeLlm();
  testDb = await createTestDatabase();
  database = await testDb.open();
});

afterAll(async () => {
  await loopd?.close();
  await database?.close();
  await testDb?.drop();
  await llm?.close();
});

test("a start on a starved event loop refuses nothing: /healthz, /readyz, reads and new runs are served while it lags", async () => {
  // Lagging from before the start to the end: a start on a machine whose cores are taken.
  const lag = lagEventLoop();
  try {
    loopd = await startLoopd({ database, llm, env: { MAX_EVENT_LOOP_DELAY_MS: "100" }, pressureSampleMs: 100 });
    const inject = loopd.app.inject.bind(loopd.app);
    const conv = await api(loopd.app).createConversation({ provider: "anthropic" });
    llm.script({ text: "Served." });
    const [health, ready, list, send] = await Promise.all([
      inject({ method: "GET", url: "/healthz" }),
      inject({ method: "GET", url: "/readyz" }),
      inject({ method: "GET", url: "/conversations" }),
      api(loopd.app).send(conv.id, { content: "the first run" }),
    ]);
    expect([health, ready, list, send].map((res) => res.statusCode)).toEqual([200, 200, 200, 200]);
    expect(ready.json()).toEqual({ status: "ready" });
    expect(send.json().run).toMatchObject({ status: "completed" });
    // Every sample so far lagged past the threshold: the start is still not judged.
    expect(loopd.services.overload.state).toBe("warming");
  } finally {
    await lag.stop();
  }
});
