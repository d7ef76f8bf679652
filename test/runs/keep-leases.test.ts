import { eq, sql } from "drizzle-orm";
import { afterEach, expect, test, vi } from "vitest";
import { emptyUsage } from "../../src/core/usage.js";
import { sendMessage } from "../../src/conversations/send-message.js";
import { runs } from "../../src/store/schema.js";
import { createStore } from "../../src/store/store.js";
import { isEvent, readSse } from "../support/helpers/sse-client.js";
import { startLoopd } from "../support/helpers/start-loopd.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testTools } from "../support/helpers/test-tools.js";

// A lease far longer than any test: whatever is taken over here is taken over for a reason other than expiry.
const LEASE_MS = 60_000;
const f = useLoopd({
  listen: true,
  tools: testTools(),
  env: { RUN_LEASE_MS: String(LEASE_MS), SHUTDOWN_TIMEOUT_MS: "3000" },
});

const post = (path: string, body: unknown) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const newConversation = async (body: Record<string, unknown>) =>
  (await post("/conversations", body)).json() as Promise<{ id: string }>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Seconds from the database's now() to the run's lease end. */
async function leaseLeftS(runId: string): Promise<number> {
  const rows = await f.database.db
    .select({ left: sql<number>`extract(epoch from (${runs.leaseExpiresAt} - now()))::float8` })
    .from(runs)
    .where(eq(runs.id, runId));
  return Number(rows[0]!.left);
}

async function until<T>(what: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await what();
    if (done(v) || Date.now() > deadline) return v;
    await sleep(50);
  }
}

afterEach(async () => {
  vi.useRealTimers();
  // What a test left running (then recovered by a restart) ends before the next test scripts the model.
  await until(
    async () =>
      (
        await f.database.db
          .select({ id: runs.id })
          .from(runs)
          .where(sql`${runs.status} in ('queued', 'running')`)
      ).length,
    (n) => n === 0,
    20_000,
  );
});

test("a run started while the server drains releases its own lease, and the runs still finishing keep theirs", async () => {
  const busy = await newConversation({ provider: "anthropic", tools: ["wait_for_abort"] });
  const late = await newConversation({ provider: "anthropic" });
  f.llm.script({ toolCalls: [{ name: "wait_for_abort", input: {} }] });
  const stream = await post(`/conversations/${busy.id}/messages`, { content: "Work", stream: true });
  const busyRun = stream.headers.get("x-loopd-run-id")!;
  for await (const item of readSse(stream)) if (isEvent(item) && item.event === "tool_call.started") break;

  const closing = f.loopd.close(); // the busy run has SHUTDOWN_TIMEOUT_MS to finish its tool
  // A request that was under way when the shutdown began creates its run now.
  const { run: lateRun } = await sendMessage(
    { services: f.loopd.services, runs: f.loopd.runs },
    { tenant: "default", conversationId: late.id, content: "Hello" },
  );
  expect(
    await until(
      () => leaseLeftS(lateRun.id),
      (s) => s <= 0,
    ),
  ).toBeLessThanOrEqual(0);
  // The draining run still holds its lease: nobody may take it over while its tool runs here.
  expect(await leaseLeftS(busyRun)).toBeGreaterThan(LEASE_MS / 1000 - 5);
  await closing;
  await f.restart();
});

test("leases and end times come from the database's clock, whatever the server's clock says", async () => {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 3_600_000 }); // this server's clock is an hour fast
  const conv = await newConversation({ provider: "openai" });
  f.llm.script({ hang: true });
  const stream = await post(`/conversations/${conv.id}/messages`, { content: "Wait", stream: true });
  const runId = stream.headers.get("x-loopd-run-id")!;
  expect(await leaseLeftS(runId)).toBeLessThan(LEASE_MS / 1000 + 5);
  const cancelled: any = await (
    await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${runId}/cancel`, { method: "POST" })
  ).json();
  expect(cancelled.status).toBe("cancelled");
  await stream.body?.cancel();
  const [row] = await f.database.db
    .select({ took: sql<number | null>`extract(epoch from (${runs.completedAt} - ${runs.createdAt}))::float8` })
    .from(runs)
    .where(eq(runs.id, runId));
  expect(row!.took).not.toBeNull();
  expect(Math.abs(Number(row!.took))).toBeLessThan(60);
});

test("on the embedded database, runs left by a stopped process are taken over at start; on a server, not before their lease lapses", async () => {
  const conv = await newConversation({ provider: "anthropic" });
  f.llm.script({ hang: true });
  const stream = await post(`/conversations/${conv.id}/messages`, { content: "Go", stream: true });
  const runId = stream.headers.get("x-loopd-run-id")!;
  await until(
    async () => f.llm.requests.length,
    (n) => n === 1,
  );
  // Another process "owns" the run with a long lease, as one that died a moment ago would.
  await f.database.db
    .update(runs)
    .set({ leaseOwner: "a-process-that-died", leaseExpiresAt: sql`now() + interval '60 seconds'` })
    .where(eq(runs.id, runId));
  await stream.body?.cancel();
  // This process notices at its next renewal and lets go of the run.
  await until(
    async () => f.loopd.runs.activeCount,
    (n) => n === 0,
  );
  f.llm.script({ text: "Picked up where it stopped." });
  const startedAt = Date.now();
  await f.restart();
  const getRun = async (): Promise<any> =>
    (await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${runId}`)).json();

  if (f.testDb.kind === "pglite") {
    // Only one process can open the embedded database: the run is orphaned for sure.
    const run = await until(getRun, (r) => r.status !== "running");
    expect(run).toMatchObject({ status: "completed", stop_reason: "end_turn" });
    expect(Date.now() - startedAt).toBeLessThan(LEASE_MS / 2);
  } else {
    // Another process may be alive and running it: it is left alone while its lease holds.
    await sleep(1_500);
    expect(await getRun()).toMatchObject({ status: "running" });
    expect(
      (await f.database.db.select({ owner: runs.leaseOwner }).from(runs).where(eq(runs.id, runId)))[0]!.owner,
    ).toBe("a-process-that-died");
    await f.database.db
      .update(runs)
      .set({ leaseExpiresAt: sql`now() - interval '1 second'` })
      .where(eq(runs.id, runId));
    const run = await until(getRun, (r) => r.status !== "running", 15_000);
    expect(run).toMatchObject({ status: "completed", stop_reason: "end_turn" });
  }
});

test("a sweep claims expired runs in batches, in id order, skipping rows another sweeper holds", async () => {
  const store = createStore(f.database);
  const ids: string[] = [];
  for (let i = 0; i < 13; i++) {
    const conv = await newConversation({ provider: "mock" });
    const id = `run_sweep_${String(i).padStart(2, "0")}`;
    await store.transaction(async (tx) => {
      await tx.runs.insert({
        id,
        conversationId: conv.id,
        status: "running",
        provider: "mock",
        model: "loopd-mock",
        usage: emptyUsage(),
        request: { max_steps: 1, tool_choice: "auto", model: null },
        leaseOwner: "a-process-that-died",
        leaseMs: -1_000,
      });
    });
    ids.push(id);
  }
  // Stop this process's own sweeper from taking them first.
  await f.loopd.close();
  const first = await store.runs.claimExpired({ owner: "sweeper-a", leaseMs: LEASE_MS, limit: 5 });
  expect(first.map((r) => r.id).sort()).toEqual(ids.slice(0, 5));

  if (f.testDb.kind === "postgres") {
    // Another sweeper holds the next expired row: this one skips it instead of waiting for it.
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    let locked = () => {};
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = f.database.db.transaction(async (tx) => {
      await tx.execute(sql`select id from runs where id = ${ids[5]!} for update`);
      locked();
      await held;
    });
    await isLocked;
    const second = await Promise.race([
      store.runs.claimExpired({ owner: "sweeper-b", leaseMs: LEASE_MS, limit: 5 }),
      sleep(5_000).then(() => "blocked" as const),
    ]);
    release();
    await holder;
    expect(second === "blocked" ? second : second.map((r) => r.id).sort()).toEqual(ids.slice(6, 11));
  } else {
    const second = await store.runs.claimExpired({ owner: "sweeper-b", leaseMs: LEASE_MS, limit: 5 });
    expect(second.map((r) => r.id).sort()).toEqual(ids.slice(5, 10));
  }
  await store.transaction(async (tx) => {
    for (const id of ids) await tx.runs.update(id, { status: "failed", stopReason: "error", ended: true });
  });
  await f.restart();
});

test("two processes sweeping together recover each abandoned run exactly once", async () => {
  const store = createStore(f.database);
  await f.loopd.close();
  const count = 12;
  const convIds: string[] = [];
  for (let i = 0; i < count; i++) f.llm.script({ text: "Answered once.", chunkDelayMs: 20 });
  // A process that stalls past its lease (a busy CI machine) rightly loses its
  // runs to the other one: the lease is long enough that only the race is tested.
  const env = { RUN_LEASE_MS: "6000" };
  // Both started before the runs are abandoned: on the embedded database a
  // process takes every run over as it starts (it assumes it is alone), so
  // the runs are left for their periodic sweeps, which race each other.
  const [a, b] = await Promise.all([
    startLoopd({ database: f.database, llm: f.llm, tools: testTools(), env, instanceId: "sweeper-a" }),
    startLoopd({ database: f.database, llm: f.llm, tools: testTools(), env, instanceId: "sweeper-b" }),
  ]);
  for (let i = 0; i < count; i++) {
    const conv = await store.conversations.create({
      title: null,
      system: null,
      provider: "anthropic",
      model: "claude-test",
      tools: [],
      metadata: {},
    });
    convIds.push(conv.id);
    await store.transaction(async (tx) => {
      const run = await tx.runs.insert({
        id: `run_twice_${String(i).padStart(2, "0")}`,
        conversationId: conv.id,
        status: "running",
        provider: "anthropic",
        model: "claude-test",
        usage: emptyUsage(),
        request: { max_steps: 2, tool_choice: "auto", model: null },
        leaseOwner: "a-process-that-died",
        leaseMs: -1_000,
      });
      const [user] = await tx.messages.append({
        conversationId: conv.id,
        runId: run.id,
        items: [{ role: "user", content: [{ type: "text", text: `Question ${i}` }] }],
      });
      await tx.events.append(run.id, [
        { seq: 1, type: "run.created", data: {} },
        { seq: 2, type: "message.created", data: { seq: user!.seq } },
      ]);
    });
  }
  try {
    const ended = await until(
      async () =>
        (
          await f.database.db
            .select({ status: runs.status })
            .from(runs)
            .where(sql`${runs.id} like 'run_twice_%'`)
        ).map((r) => r.status),
      (statuses) => statuses.every((s) => s !== "running"),
      20_000,
    );
    expect(ended).toEqual(Array(count).fill("completed"));
    expect(f.llm.requests).toHaveLength(count);
    const restarts = await f.database.db.execute(
      sql`select run_id, count(*)::int as n from run_events where type = 'step.restarted' and run_id like 'run_twice_%' group by run_id`,
    );
    expect((restarts as unknown as { rows: { n: number }[] }).rows.map((r) => r.n)).toEqual(Array(count).fill(1));
  } finally {
    await Promise.all([a.close(), b.close()]);
    await f.restart();
  }
});
