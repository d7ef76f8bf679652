/**
 * RETENTION_DAYS: conversations idle that long are deleted, in batches, by
 * one instance at a time, never one with an open run (running, queued or
 * paused) or a recent one; each sweep is logged with its count.
 */
import { sql } from "drizzle-orm";
import { expect, test } from "vitest";
import { captureLogs } from "../support/helpers/log-sink.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const logs = captureLogs("info");
const f = useLoopd({ env: { RETENTION_DAYS: "30" }, logger: logs.logger });
const post = async (url: string, payload: object) =>
  (await f.loopd.app.inject({ method: "POST", url, payload })).json();
/** Moves a conversation, and its runs, `days` into the past. */
async function age(id: string, days: number) {
  const when = sql`now() - make_interval(days => ${days})`;
  await f.database.db.execute(
    sql`update conversations set updated_at = ${when}, created_at = ${when} where id = ${id}`,
  );
  await f.database.db.execute(
    sql`update runs set created_at = ${when}, completed_at = case when completed_at is null then null else ${when} end where conversation_id = ${id}`,
  );
}

test("exactly the idle conversations go, with their messages and runs; open, recently run and recent ones stay; the sweep says how many", async () => {
  const make = async (extra: object = {}) =>
    (await post("/conversations", { provider: "openai", ...extra })).id as string;
  const idle = [await make(), await make()];
  const withRun = await make();
  f.llm.script({ text: "Old." });
  await post(`/conversations/${withRun}/messages`, { content: "Hello" });
  idle.push(withRun);
  const paused = await make({ approval_required: ["calculate"] });
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
  expect((await post(`/conversations/${paused}/messages`, { content: "Add." })).run.status).toBe("requires_action");
  const recentRun = await make();
  const recent = await make();
  for (const id of [...idle, paused, recentRun]) await age(id, 40);
  // Old, but a run ended yesterday.
  f.llm.script({ text: "New." });
  await post(`/conversations/${recentRun}/messages`, { content: "Again" });

  logs.lines.length = 0;
  expect(await f.loopd.retention!.sweep()).toBe(3);
  const exists = async (id: string) =>
    (await f.loopd.app.inject({ method: "GET", url: `/conversations/${id}` })).statusCode;
  for (const id of idle) expect(await exists(id)).toBe(404);
  for (const id of [paused, recentRun, recent]) expect(await exists(id)).toBe(200);
  const left = (await f.database.db.execute(
    sql`select count(*)::int as n from messages where conversation_id = ${withRun}`,
  )) as unknown as { rows: { n: number }[] };
  expect(left.rows[0]!.n).toBe(0);
  expect(logs.lines.filter((l) => l.msg === "retention sweep")).toEqual([
    expect.objectContaining({ deleted: 3, days: 30 }),
  ]);
  expect((await f.loopd.app.inject({ method: "GET", url: "/metrics" })).body).toMatch(
    /loopd_retention_deleted_conversations_total 3/,
  );
  // Nothing more to do.
  expect(await f.loopd.retention!.sweep()).toBe(0);
});

test("a sweep another instance holds the lock of deletes nothing here and says so", async () => {
  const id = (await post("/conversations", { provider: "openai" })).id as string;
  await age(id, 40);
  // Another instance's sweep, in the middle of its transaction.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  let holding = () => {};
  const isHolding = new Promise<void>((resolve) => (holding = resolve));
  const other = f.database.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${0x6c70_6472})`);
    holding();
    await held;
  });
  await isHolding;
  logs.lines.length = 0;
  if (f.database.kind === "postgres") {
    expect(await f.loopd.retention!.sweep()).toBe(0);
    expect(logs.lines.find((l) => l.msg === "retention sweep")).toMatchObject({
      deleted: 0,
      skipped: "another instance is sweeping",
    });
  }
  release();
  await other;
  expect(await f.loopd.retention!.sweep()).toBe(1);
});
