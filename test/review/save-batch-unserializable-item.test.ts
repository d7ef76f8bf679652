import { afterAll, beforeAll, expect, test } from "vitest";
import { eq } from "drizzle-orm";
import { emptyUsage } from "../../src/core/usage.js";
import type { Database } from "../../src/store/db.js";
import { createRunSaver, type RunSave } from "../../src/store/save-run-step.js";
import { messages } from "../../src/store/schema.js";
import { createStore, type Store } from "../../src/store/store.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

// Review: saveRunSteps serializes the whole batch in one pgSafeJson call, in
// `many`. A value that only its own save cannot serialize (here: tool-call
// arguments a model nested deeper than JSON.stringify's recursion allows —
// JSON.parse reads them, JSON.stringify throws RangeError) makes `many` throw,
// and `grouped` rejects every save of the batch: other runs' saves fail with it.
// Alone (`one`), only the bad save fails.

let testDb: TestDatabase;
let database: Database;
let store: Store;

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = await testDb.open();
  store = createStore(database);
});
afterAll(async () => {
  await database.close();
  await testDb.drop();
});

async function runningRun(i: number): Promise<{ runId: string; conversationId: string }> {
  const conv = await store.conversations.create({ tenantId: "default", provider: "mock", model: "loopd-mock", tools: [], metadata: {}, title: null, system: null });
  const runId = `run_rv_${i}_${conv.id}`;
  await store.runs.insert({ id: runId, conversationId: conv.id, status: "running", provider: "mock", model: "loopd-mock", usage: emptyUsage(), request: { max_steps: 3, tool_choice: "auto", model: null }, leaseOwner: "me", leaseMs: 60_000 });
  return { runId, conversationId: conv.id };
}

const saveOf = ({ runId, conversationId }: { runId: string; conversationId: string }, content: unknown): RunSave => ({
  runId,
  owner: "me",
  conversationId,
  firstSeq: 1,
  messages: [{ id: `msg_${runId}`, role: "assistant", content, event_seq: 1 }],
  events: [],
  progress: { steps: 1, usage: emptyUsage() },
});

test("one run's unserializable save does not fail the other saves of its batch", async () => {
  const [plug, victim, attacker] = await Promise.all([0, 1, 2].map(runningRun));
  // Arguments as a provider's JSON gives them: JSON.parse takes this depth, JSON.stringify does not.
  const depth = 200_000;
  const args = JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown;
  expect(() => JSON.stringify(args)).toThrow(RangeError);
  const save = createRunSaver({ query: database.query, notifies: false, slots: 1 });
  const results = await Promise.allSettled([
    save(saveOf(plug!, [{ type: "text", text: "plug" }])),
    // These two wait for the plug's slot and go together.
    save(saveOf(victim!, [{ type: "text", text: "innocent" }])),
    save(saveOf(attacker!, [{ type: "tool_call", id: "c1", name: "x", arguments: args }])),
  ]);
  expect(results[0]!.status).toBe("fulfilled");
  expect(results[2]!.status).toBe("rejected");
  // Fails today: the victim's save is rejected with the attacker's RangeError.
  expect(results[1]).toMatchObject({ status: "fulfilled", value: expect.any(Date) });
  expect((await database.db.select().from(messages).where(eq(messages.conversationId, victim!.conversationId))).length).toBe(1);
});
