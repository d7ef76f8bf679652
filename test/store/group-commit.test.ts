import { expect, test } from "vitest";
import { eq } from "drizzle-orm";
import { emptyUsage } from "../../src/core/usage.js";
import { createRunSaver, type RunSave } from "../../src/store/save-run-step.js";
import { grouped, ItemFailed } from "../../src/store/group-commit.js";
import { messages, runEvents } from "../../src/store/schema.js";
import pg from "pg";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useTestStore, waitingForLock } from "../support/helpers/use-test-store.js";

const f = useTestStore();
const runningRun = (i: number) => f.runningRun(`batch_${i}`);

const saveOf = (
  { runId, conversationId }: { runId: string; conversationId: string },
  firstSeq: number,
  text: string,
): RunSave => ({
  runId,
  owner: "me",
  conversationId,
  firstSeq,
  messages: [{ id: `msg_${runId}`, role: "user", content: [{ type: "text", text }], event_seq: 1 }],
  events: [{ seq: 2, type: "text.delta", data: { delta: text } }],
  progress: { steps: 1, usage: emptyUsage() },
});

test("saves that queue go together in one statement; one that fails is undone alone, the others are kept", async () => {
  const [a, b, c, d] = await Promise.all([0, 1, 2, 3].map(runningRun));
  // One slot: the first save takes it; the three that come meanwhile wait, then go together.
  const save = createRunSaver({ query: f.database.query, notifies: f.database.kind === "postgres", slots: 1 });
  const before = f.database.statements();
  const results = await Promise.allSettled([
    save(saveOf(a!, 1, "alone")),
    save(saveOf(b!, 1, "batched")),
    // Its history does not end at seq 6: loopd_save refuses it (40001).
    save(saveOf(c!, 7, "refused")),
    save({ ...saveOf(d!, 1, "not owned"), owner: "another process" }),
  ]);
  expect(f.database.statements() - before).toBe(2);
  expect(results[0]).toMatchObject({ status: "fulfilled", value: expect.any(Date) });
  expect(results[1]).toMatchObject({ status: "fulfilled", value: expect.any(Date) });
  expect(results[3]).toEqual({ status: "fulfilled", value: null });
  expect(results[2].status).toBe("rejected");
  const failure = (results[2] as PromiseRejectedResult).reason as ItemFailed;
  expect(failure).toBeInstanceOf(ItemFailed);
  expect(failure.code).toBe("40001");
  expect(failure.message).toMatch(/does not end at seq 6/);

  const rowsOf = async (conversationId: string, runId: string) => ({
    messages: (await f.database.db.select().from(messages).where(eq(messages.conversationId, conversationId))).map(
      (m) => m.content,
    ),
    events: (await f.database.db.select().from(runEvents).where(eq(runEvents.runId, runId))).map((e) => e.data),
  });
  expect(await rowsOf(b!.conversationId, b!.runId)).toEqual({
    messages: [[{ type: "text", text: "batched" }]],
    events: [{ delta: "batched" }],
  });
  expect(await rowsOf(c!.conversationId, c!.runId)).toEqual({ messages: [], events: [] });
  expect(await rowsOf(d!.conversationId, d!.runId)).toEqual({ messages: [], events: [] });
  expect((await f.store.runs.get(b!.runId))!.steps).toBe(1);
  expect((await f.store.runs.get(c!.runId))!.steps).toBe(0);
});

test("a batch's values are mended as a single save's are (NUL, lone surrogates), and all of it is one transaction's time", async () => {
  const runs = await Promise.all([10, 11, 12].map(runningRun));
  const save = createRunSaver({ query: f.database.query, notifies: false, slots: 1 });
  const times = await Promise.all(runs.map((r, i) => save(saveOf(r, 1, `t${i}\u0000\ud800`))));
  expect(times[1]!.getTime()).toBe(times[2]!.getTime());
  const [row] = await f.database.db.select().from(messages).where(eq(messages.conversationId, runs[2]!.conversationId));
  expect(row!.content).toEqual([{ type: "text", text: "t2\ufffd\ufffd" }]);
});

test.runIf(testDatabaseKind === "postgres")(
  "a batch of saves and a lease renewal lock runs in one order: neither waits for the other in a cycle",
  async () => {
    const [low, mid, high, plug] = (await Promise.all([20, 21, 22, 23].map(runningRun))).sort((a, b) =>
      a.runId < b.runId ? -1 : 1,
    );
    const blocker = new pg.Client({ connectionString: f.testDb.url });
    const watcher = new pg.Client({ connectionString: f.testDb.url });
    await blocker.connect();
    await watcher.connect();
    try {
      await blocker.query("begin");
      await blocker.query("select 1 from runs where id = $1 for update", [mid!.runId]);
      // The renewal takes the lowest run's lock, then waits for the middle one's.
      const renewal = f.store.runs.renewLeases({
        owner: "me",
        runIds: [high!.runId, mid!.runId, low!.runId],
        leaseMs: 60_000,
      });
      await waitingForLock(watcher, 'update "runs"');
      // One slot: the plug's save goes alone; the highest and the lowest runs' saves, asked meanwhile, go together after it.
      const save = createRunSaver({ query: f.database.query, notifies: false, slots: 1 });
      const before = f.database.statements();
      const saves = [save(saveOf(plug!, 1, "plug")), save(saveOf(high!, 1, "high")), save(saveOf(low!, 1, "low"))];
      await waitingForLock(watcher, "select loopd_save_many");
      await blocker.query("commit");
      expect((await renewal).map((r) => r.id).sort()).toEqual([low!.runId, mid!.runId, high!.runId].sort());
      expect(await Promise.all(saves)).toEqual([expect.any(Date), expect.any(Date), expect.any(Date)]);
      // The plug's save and one batch: no save was undone by a deadlock and written again.
      expect(f.database.statements() - before).toBe(2);
    } finally {
      await blocker.end();
      await watcher.end();
    }
  },
);

test("runs started at the same moment go in one statement, each undone alone: one started, one refused by the one-run rule, one sent to the general path", async () => {
  const conv = () => f.conversation();
  const [first, busy, queued] = [await conv(), await conv(), await conv()];
  // A run waits in `queued`'s queue: the one-statement start refuses it (LD001), and the general path takes it.
  await f.store.runs.insert({
    id: `run_q_${queued}`,
    conversationId: queued,
    status: "queued",
    provider: "mock",
    model: "loopd-mock",
    usage: emptyUsage(),
    request: { max_steps: 3, tool_choice: "auto", model: null },
    leaseOwner: null,
    leaseMs: 0,
  });
  const startOn = (conversationId: string, n: number) =>
    f.store.runs.start({
      run: {
        id: `run_s${n}_${conversationId}`,
        conversationId,
        provider: "mock",
        model: "loopd-mock",
        usage: emptyUsage(),
        request: { max_steps: 3, tool_choice: "auto", model: null },
        idempotencyKey: null,
        requestHash: "h",
        leaseOwner: "me",
      },
      leaseMs: 60_000,
      tenant: "default",
      cap: 0,
      messageId: `msg_s${n}_${conversationId}`,
      content: [{ type: "text", text: `hello ${n}` }],
    });
  const before = f.database.statements();
  // The store's slots (a fifth of the pool; one on PGlite, or of a pool of 5): the first goes alone, or the first two;
  // the rest go together.
  const settled = await Promise.allSettled([startOn(first, 1), startOn(busy, 2), startOn(busy, 3), startOn(queued, 4)]);
  expect(f.database.statements() - before).toBeLessThan(4);
  expect(settled[0]).toMatchObject({
    status: "fulfilled",
    value: { run: { id: `run_s1_${first}`, firstSeq: 1, status: "running" } },
  });
  expect(settled[1]).toMatchObject({ status: "fulfilled", value: { run: { id: `run_s2_${busy}` } } });
  // Two runs at once on one conversation: the second breaks the one-active-run index, and only it is undone.
  expect(settled[2]).toMatchObject({
    status: "rejected",
    reason: { code: "23505", constraint: "runs_one_active_per_conversation_key" },
  });
  expect(settled[3]).toEqual({ status: "fulfilled", value: null });
  expect(
    (await f.database.db.select().from(messages).where(eq(messages.conversationId, busy))).map((m) => m.id),
  ).toEqual([`msg_s2_${busy}`]);
  expect(await f.database.db.select().from(messages).where(eq(messages.conversationId, queued))).toEqual([]);
});

test("grouped: what waits for a slot says how long it has waited (admission control reads it); alone, an item goes at once", async () => {
  const gates: Array<() => void> = [];
  const batches: number[][] = [];
  const send = grouped<number, number>({
    slots: 1,
    one: (n) => new Promise((resolve) => gates.push(() => resolve(n * 10))),
    many: async (ns) => (batches.push(ns), ns.map((n) => (n === 3 ? new Error("three") : n * 10))),
  });
  expect(send.longestWaitMs()).toBe(0);
  const first = send(1);
  expect(send.longestWaitMs()).toBe(0);
  const rest = [send(2), send(3), send(4)].map((p) => p.catch((err: Error) => err.message));
  await new Promise((resolve) => setImmediate(resolve));
  expect(send.longestWaitMs()).toBeGreaterThan(0);
  gates.shift()!();
  expect(await first).toBe(10);
  expect(await Promise.all(rest)).toEqual([20, "three", 40]);
  expect(batches).toEqual([[2, 3, 4]]);
  expect(send.longestWaitMs()).toBe(0);
});
