import { afterAll, beforeAll, expect, test } from "vitest";
import { createBroadcast, type Broadcast } from "../../src/store/broadcast.js";
import type { Database } from "../../src/store/db.js";
import { createStore } from "../../src/store/store.js";
import { createTestDatabase, type TestDatabase } from "../support/helpers/test-database.js";

let testDb: TestDatabase;
let database: Database;
const opened: Broadcast[] = [];

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = await testDb.open();
});
afterAll(async () => {
  for (const b of opened) await b.close();
  await database?.close();
  await testDb?.drop();
});

const broadcast = () => {
  const b = createBroadcast({ database });
  opened.push(b);
  return b;
};

test("a nudge sent in a transaction reaches another listener when it commits, not before (on a real server; the embedded database has one process and sends nothing)", async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on("warning", onWarning);
  const listener = broadcast();
  const heard: string[] = [];
  listener.on("loopd_run_events", (id) => heard.push(id));
  // More channels while the first LISTEN connects: each LISTEN waits its turn.
  const cancels: string[] = [];
  listener.on("loopd_run_cancel", (id) => cancels.push(id));
  listener.on("loopd_run_queued", () => {});
  await new Promise((r) => setTimeout(r, 200)); // LISTEN is in place

  expect(listener.listening).toBe(testDb.kind === "postgres");
  process.off("warning", onWarning);
  expect(warnings.filter((message) => message.includes("already executing a query"))).toEqual([]);

  const sender = createStore(database);
  let seenInside: string[] = [];
  await sender.transaction(async (tx) => {
    await tx.notify("loopd_run_events", "run_a");
    await new Promise((r) => setTimeout(r, 100));
    seenInside = [...heard];
  });
  await sender.notify("loopd_run_cancel", "run_b");
  for (let i = 0; i < 50 && (heard.length === 0 || cancels.length === 0); i++)
    await new Promise((r) => setTimeout(r, 20));
  expect(seenInside).toEqual([]);
  if (testDb.kind === "postgres") {
    expect(heard).toEqual(["run_a"]);
    expect(cancels).toEqual(["run_b"]);
  } else {
    expect(heard).toEqual([]);
    expect(cancels).toEqual([]);
  }
});
