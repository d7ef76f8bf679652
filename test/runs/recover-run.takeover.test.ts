import { eq, sql } from "drizzle-orm";
import { expect, test } from "vitest";
import { runs } from "../../src/store/schema.js";
import { collectEvents, isEvent, readSse } from "../support/helpers/sse-client.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testTools } from "../support/helpers/test-tools.js";

// A short lease so that the sweeper takes abandoned runs over within the test.
const f = useLoopd({ listen: true, tools: testTools(), env: { RUN_LEASE_MS: "1200" } });

const post = (path: string, body: unknown) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const bodyOf = async (res: Promise<Response>): Promise<any> => (await res).json();
const getJson = async (path: string): Promise<any> => (await fetch(`${f.loopd.url}${path}`)).json();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("a process that lost its run's lease stops writing, and the run is resumed by whoever takes it over", async () => {
  const conv = await bodyOf(post("/conversations", { provider: "anthropic" }));
  const words = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ");
  f.llm.script({ text: words, chunkDelayMs: 10 }, { text: "The resumed answer." });
  const res = await (
    await post(`/conversations/${conv.id}/messages`, { content: "Go", stream: true })
  ).body!.getReader();
  await res.read(); // the run is under way
  const runId = (await getJson(`/conversations/${conv.id}/runs`)).data[0].id;
  await sleep(100);

  // Another process takes the run over (as if this one had stalled past its lease).
  const { db } = f.database;
  await db
    .update(runs)
    .set({ leaseOwner: "another-process", leaseExpiresAt: new Date(Date.now() + 60_000) })
    .where(eq(runs.id, runId));
  const store = f.loopd.services.store;
  // Within a renewal (≤ 1 s) the owner notices and stops; then nothing more is written.
  await sleep(1_300);
  const seqAfterStop = await store.events.lastSeq(runId);
  await sleep(500);
  expect(await store.events.lastSeq(runId)).toBe(seqAfterStop);
  expect((await store.messages.ofRun({ conversationId: conv.id, runId, firstSeq: null })).map((m) => m.role)).toEqual([
    "user",
  ]);
  expect((await store.runs.get(runId))!.status).toBe("running");

  // The new owner "dies" too: its lease lapses, and the sweeper resumes the run from its last saved step.
  await db
    .update(runs)
    .set({ leaseExpiresAt: new Date(Date.now() - 1_000) })
    .where(eq(runs.id, runId));
  let run: any;
  for (let i = 0; i < 100; i++) {
    run = await getJson(`/conversations/${conv.id}/runs/${runId}`);
    if (run.status !== "running") break;
    await sleep(50);
  }
  expect(run).toMatchObject({ status: "completed", stop_reason: "end_turn" });
  const events = await collectEvents(await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${runId}/events`));
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const restart = events.findIndex((e) => e.event === "step.restarted");
  expect(restart).toBeGreaterThan(0);
  // After the marker, the step's deltas add up to the saved text.
  const after = events.slice(restart);
  expect(
    after
      .filter((e) => e.event === "text.delta")
      .map((e) => e.data.delta)
      .join(""),
  ).toBe("The resumed answer.");
  expect(after.find((e) => e.event === "message.created")!.data.message.content).toEqual([
    { type: "text", text: "The resumed answer." },
  ]);
  expect(events.at(-1)!.event).toBe("run.completed");
  await res.cancel();
});

test("a reader that already has the terminal event gets an empty stream that ends at once", async () => {
  const conv = await bodyOf(post("/conversations", { provider: "openai" }));
  f.llm.script({ text: "Done." });
  const { run } = await bodyOf(post(`/conversations/${conv.id}/messages`, { content: "Hi" }));
  const all = await collectEvents(await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/events`));
  const last = all.at(-1)!.id;
  for (const headers of [{ "last-event-id": String(last) }, { "last-event-id": String(last + 50) }]) {
    const res = await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${run.id}/events`, {
      headers,
      signal: AbortSignal.timeout(5_000),
    });
    expect(await collectEvents(res)).toEqual([]);
  }
});

test("deleting a conversation stops its run", async () => {
  const conv = await bodyOf(post("/conversations", { provider: "openai" }));
  f.llm.script({ hang: true });
  const stream = await post(`/conversations/${conv.id}/messages`, { content: "Hang", stream: true });
  const runId = stream.headers.get("x-loopd-run-id");
  expect(runId).toMatch(/^run_/);
  expect(f.loopd.runs.activeCount).toBe(1);
  expect((await fetch(`${f.loopd.url}/conversations/${conv.id}`, { method: "DELETE" })).status).toBe(204);
  for (let i = 0; i < 50 && f.loopd.runs.activeCount > 0; i++) await sleep(20);
  expect(f.loopd.runs.activeCount).toBe(0);
  await collectEvents(stream); // the stream ends too
});

test("deleting a long conversation while its run is in a tool neither deadlocks nor fails", async () => {
  const conv = await bodyOf(post("/conversations", { provider: "openai", tools: ["wait_for_abort"] }));
  // A long history makes the delete slow, so the run's cancel-time save lands inside it.
  const filler = 30_000;
  await f.database.db.execute(sql`
    insert into messages (id, conversation_id, seq, role, content)
    select 'msg_filler_' || n, ${conv.id}, n, 'user', '[{"type":"text","text":"filler"}]'::jsonb from generate_series(1, ${filler}) n`);
  f.llm.script({ toolCalls: [{ name: "wait_for_abort", input: {} }] });
  const stream = await post(`/conversations/${conv.id}/messages`, { content: "Work", stream: true });
  const reader = readSse(stream);
  for await (const item of reader) if (isEvent(item) && item.event === "tool_call.started") break;

  const res = await fetch(`${f.loopd.url}/conversations/${conv.id}`, { method: "DELETE" });
  expect(res.status).toBe(204);
  for (let i = 0; i < 100 && f.loopd.runs.activeCount > 0; i++) await sleep(20);
  expect(f.loopd.runs.activeCount).toBe(0);
  expect((await fetch(`${f.loopd.url}/conversations/${conv.id}`)).status).toBe(404);
  await reader.return(undefined);
});

test("a shutdown answers the calls it cuts short as interrupted, and the next start resumes the run", async () => {
  const conv = await bodyOf(post("/conversations", { provider: "anthropic", tools: ["wait_for_abort"] }));
  f.llm.script({ toolCalls: [{ name: "wait_for_abort", input: {} }] }, { text: "Carrying on after the restart." });
  const stream = await post(`/conversations/${conv.id}/messages`, { content: "Work", stream: true });
  const runId = stream.headers.get("x-loopd-run-id")!;
  for await (const item of readSse(stream)) if (isEvent(item) && item.event === "tool_call.started") break;

  const store = f.loopd.services.store;
  await f.loopd.close(); // SHUTDOWN_TIMEOUT_MS (2 s) for the tool, then it is stopped
  const results = (await store.messages.ofRun({ conversationId: conv.id, runId, firstSeq: null }))
    .filter((m) => m.role === "tool")
    .map((m) => m.content[0] as any);
  expect(results).toEqual([
    expect.objectContaining({ is_error: true, content: expect.stringContaining("interrupted") }),
  ]);
  expect((await store.runs.get(runId))!.status).toBe("running");

  await f.restart();
  let run: any;
  for (let i = 0; i < 100; i++) {
    run = await getJson(`/conversations/${conv.id}/runs/${runId}`);
    if (run.status !== "running") break;
    await sleep(50);
  }
  expect(run).toMatchObject({ status: "completed" });
  const history = (await getJson(`/conversations/${conv.id}/messages`)).data;
  expect(history.map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
});
