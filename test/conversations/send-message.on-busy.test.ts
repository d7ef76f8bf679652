import { sql } from "drizzle-orm";
import { afterEach, expect, test } from "vitest";
import { runs } from "../../src/store/schema.js";
import { collectEvents } from "../support/helpers/sse-client.js";
import { expectError } from "../support/helpers/expect-error.js";
import { heldTool } from "../support/helpers/held-tool.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testTools } from "../support/helpers/test-tools.js";

/** The run ahead stays busy in `hold` exactly as long as a test needs. */
const hold = heldTool();

const f = useLoopd({ listen: true, tools: [...testTools(), hold.tool], env: { MAX_QUEUED_RUNS: "3" } });

const post = (path: string, body: unknown) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const json = async (res: Promise<Response> | Response): Promise<any> => (await res).json();
const getJson = (path: string) => json(fetch(`${f.loopd.url}${path}`));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runEnded(convId: string, runId: string): Promise<any> {
  for (let i = 0; i < 400; i++) {
    const run = await getJson(`/conversations/${convId}/runs/${runId}`);
    if (!["queued", "running"].includes(run.status)) return run;
    await sleep(25);
  }
  throw new Error(`run ${runId} did not end`);
}

/** The user texts and assistant texts of the history, in order, as `role: text` lines (tool messages as `tool: <content>`). */
async function transcript(convId: string): Promise<string[]> {
  const history = (await getJson(`/conversations/${convId}/messages?limit=1000`)).data as any[];
  return history.map((m) => {
    const block = m.content[0];
    if (m.role === "tool") return `tool: ${block.content}`;
    return `${m.role}: ${m.content.map((b: any) => (b.type === "text" ? b.text : `[${b.name}]`)).join("")}`;
  });
}

/** A conversation whose first run is inside the `hold` tool. */
async function busyConversation(extra: Record<string, unknown> = {}) {
  hold.reset();
  const conv = await json(
    post("/conversations", { provider: "anthropic", tools: ["hold", "wait_for_abort", "calculate"], ...extra }),
  );
  f.llm.script({ toolCalls: [{ name: "hold", input: {} }] }, { text: "first done" });
  const first = await post(`/conversations/${conv.id}/messages`, { content: "first", wait: false });
  expect(first.status).toBe(202);
  const { run } = (await first.json()) as any;
  await hold.entered();
  return { conv, first: run };
}

afterEach(async () => {
  hold.release();
  // Nothing a test left queued or running reaches the next test's script.
  for (let i = 0; i < 400; i++) {
    const open = await f.database.db
      .select({ id: runs.id })
      .from(runs)
      .where(sql`${runs.status} in ('queued', 'running')`);
    if (open.length === 0) return;
    await sleep(25);
  }
});

test("enqueued messages run one after another, first come first served, each starting when the one before ends", async () => {
  const { conv, first } = await busyConversation();
  f.llm.script({ text: "second done" }, { text: "third done" }, { text: "fourth done" });
  const queued: any[] = [];
  for (const content of ["second", "third", "fourth"]) {
    const res = await post(`/conversations/${conv.id}/messages`, { content, on_busy: "enqueue", wait: false });
    expect(res.status).toBe(202);
    queued.push(((await res.json()) as any).run);
  }
  expect(queued.map((r) => r.status)).toEqual(["queued", "queued", "queued"]);
  expect(queued.map((r) => r.queued_behind)).toEqual([first.id, queued[0].id, queued[1].id]);
  // Nothing of a queued run is in the history yet: it holds only the first run's messages.
  expect(await transcript(conv.id)).toEqual(["user: first", "assistant: [hold]"]);
  expect((await getJson(`/conversations/${conv.id}`)).active_run_id).toBe(first.id);

  hold.release();
  const ended = [];
  for (const run of queued) ended.push(await runEnded(conv.id, run.id));
  expect(ended.map((r) => r.status)).toEqual(["completed", "completed", "completed"]);
  expect(await transcript(conv.id)).toEqual([
    "user: first",
    "assistant: [hold]",
    "tool: held",
    "assistant: first done",
    "user: second",
    "assistant: second done",
    "user: third",
    "assistant: third done",
    "user: fourth",
    "assistant: fourth done",
  ]);
  // A queued run's stream: created queued, then started, then its own events, numbered without gaps.
  const events = await collectEvents(
    await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${queued[1].id}/events`),
  );
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  expect(events.slice(0, 3).map((e) => e.event)).toEqual(["run.created", "run.started", "message.created"]);
  expect(events[0]!.data.run).toMatchObject({ status: "queued", queued_behind: queued[0].id });
  expect(events[1]!.data.run.status).toBe("running");
  expect(events[2]!.data.message.content).toEqual([{ type: "text", text: "third" }]);
  expect(events.at(-1)!.event).toBe("run.completed");
});

test("each run of a queue starts when the one before it ends, not on the sweeper's round (review: only the first of a queue was told)", async () => {
  const conv = await json(post("/conversations", { provider: "anthropic" }));
  f.llm.script({ text: "first", chunkDelayMs: 100 }, { text: "second" }, { text: "third" }, { text: "fourth" });
  const first = await json(post(`/conversations/${conv.id}/messages`, { content: "1", wait: false }));
  const queued = [];
  for (const content of ["2", "3", "4"])
    queued.push(
      (await json(post(`/conversations/${conv.id}/messages`, { content, on_busy: "enqueue", wait: false }))).run,
    );
  expect([first.run.status, ...queued.map((r) => r.status)]).toEqual(["running", "queued", "queued", "queued"]);
  const began = Date.now();
  for (const run of queued) expect(await runEnded(conv.id, run.id)).toMatchObject({ status: "completed" });
  // The sweeper, the fallback for a process that died, comes round every 5 s here: three of its rounds would take 10 s and more.
  expect(Date.now() - began).toBeLessThan(4_000);
});

test("a queued run cancelled before it starts ends cancelled with no model call and no message; the queue goes on without it", async () => {
  const { conv } = await busyConversation();
  const second = await json(
    post(`/conversations/${conv.id}/messages`, { content: "second", on_busy: "enqueue", wait: false }),
  );
  const third = await json(
    post(`/conversations/${conv.id}/messages`, { content: "third", on_busy: "enqueue", wait: false }),
  );
  const cancelled = await json(post(`/conversations/${conv.id}/runs/${second.run.id}/cancel`, {}));
  expect(cancelled).toMatchObject({ status: "cancelled", stop_reason: "cancelled", steps: 0 });
  f.llm.script({ text: "third done" });
  hold.release();
  expect(await runEnded(conv.id, third.run.id)).toMatchObject({ status: "completed" });
  expect(await transcript(conv.id)).toEqual([
    "user: first",
    "assistant: [hold]",
    "tool: held",
    "assistant: first done",
    "user: third",
    "assistant: third done",
  ]);
  // Two model calls for the first run, one for the third: none for the cancelled one.
  expect(f.llm.requests).toHaveLength(3);
  const events = await collectEvents(
    await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${second.run.id}/events`),
  );
  expect(events.map((e) => e.event)).toEqual(["run.created", "run.cancelled"]);
});

test("reject still answers 409 while a run is active or runs are queued; the queue is bounded by MAX_QUEUED_RUNS (429 queue_full, nothing saved)", async () => {
  const { conv, first } = await busyConversation();
  const busy = await post(`/conversations/${conv.id}/messages`, { content: "no" });
  const busyBody = await busy.text();
  expectError({ statusCode: busy.status, body: busyBody, json: () => JSON.parse(busyBody) }, 409, "conversation_busy");
  for (const content of ["a", "b", "c"])
    expect(
      (await post(`/conversations/${conv.id}/messages`, { content, on_busy: "enqueue", wait: false })).status,
    ).toBe(202);
  const runsBefore = (await getJson(`/conversations/${conv.id}/runs`)).data.length;
  const full = await post(`/conversations/${conv.id}/messages`, { content: "d", on_busy: "enqueue", wait: false });
  expect(full.status).toBe(429);
  expect(((await full.json()) as any).error).toMatchObject({ code: "queue_full", details: { queued_runs: 3 } });
  expect((await getJson(`/conversations/${conv.id}/runs`)).data.length).toBe(runsBefore);
  // A plain message is refused behind a queue too, even once nothing runs ahead of it: it would jump the queue.
  const rejected = await json(post(`/conversations/${conv.id}/messages`, { content: "e" }));
  expect(rejected.error).toMatchObject({ code: "conversation_busy", details: { active_run_id: first.id } });
  f.llm.script({ text: "a" }, { text: "b" }, { text: "c" });
  hold.release();
});

test("interrupt stops a run mid tool call (its call answered 'cancelled: the user sent a new message'), ends it superseded, and the new run starts right after", async () => {
  const conv = await json(post("/conversations", { provider: "openai", tools: ["wait_for_abort"] }));
  f.llm.script({ toolCalls: [{ name: "wait_for_abort", input: {} }] });
  const first = await post(`/conversations/${conv.id}/messages`, { content: "work", stream: true });
  const firstRun = first.headers.get("x-loopd-run-id")!;
  const firstEvents = collectEvents(first);
  while ((await transcript(conv.id)).length < 2) await sleep(20);
  f.llm.script({ text: "new answer" });
  const res = await post(`/conversations/${conv.id}/messages`, {
    content: "stop, do this instead",
    on_busy: "interrupt",
  });
  expect(res.status).toBe(200);
  const second: any = await res.json();
  expect(second.run).toMatchObject({ status: "completed" });
  expect(second.output_text).toBe("new answer");
  expect(second.messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
  expect(await getJson(`/conversations/${conv.id}/runs/${firstRun}`)).toMatchObject({
    status: "cancelled",
    stop_reason: "superseded",
  });
  expect(await transcript(conv.id)).toEqual([
    "user: work",
    "assistant: [wait_for_abort]",
    "tool: cancelled: the user sent a new message",
    "user: stop, do this instead",
    "assistant: new answer",
  ]);
  const events = await firstEvents;
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  expect(events.at(-1)).toMatchObject({ event: "run.cancelled", data: { run: { stop_reason: "superseded" } } });
  // The fake rejects a history with an unanswered call: the new run's request was valid.
  expect(f.llm.requests.at(-1)!.body).toBeDefined();
});

test("interrupt (and enqueue) supersede a run paused for an approval; the new run starts at once", async () => {
  for (const onBusy of ["interrupt", "enqueue"]) {
    const conv = await json(
      post("/conversations", { provider: "anthropic", tools: ["calculate"], approval_required: ["calculate"] }),
    );
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] }, { text: "ok" });
    const paused = await json(post(`/conversations/${conv.id}/messages`, { content: "add" }));
    expect(paused.run.status).toBe("requires_action");
    const next = await json(post(`/conversations/${conv.id}/messages`, { content: "never mind", on_busy: onBusy }));
    expect(next.run).toMatchObject({ status: "completed" });
    expect(await getJson(`/conversations/${conv.id}/runs/${paused.run.id}`)).toMatchObject({
      status: "incomplete",
      stop_reason: "superseded",
    });
    expect(await transcript(conv.id)).toEqual([
      "user: add",
      "assistant: [calculate]",
      "tool: not executed: the user sent a new message instead",
      "user: never mind",
      "assistant: ok",
    ]);
  }
});

test("two interrupts and a reject sent at once: one run at a time, every accepted message in the history once, no call left unanswered", async () => {
  const conv = await json(post("/conversations", { provider: "anthropic", tools: ["wait_for_abort"] }));
  f.llm.script({ toolCalls: [{ name: "wait_for_abort", input: {} }] });
  const first = await json(post(`/conversations/${conv.id}/messages`, { content: "work", wait: false }));
  while ((await transcript(conv.id)).length < 2) await sleep(20);
  f.llm.respond = () => ({ text: "answered", chunkDelayMs: 20 });
  const answers = await Promise.all([
    post(`/conversations/${conv.id}/messages`, { content: "one", on_busy: "interrupt" }),
    post(`/conversations/${conv.id}/messages`, { content: "two", on_busy: "interrupt" }),
    post(`/conversations/${conv.id}/messages`, { content: "three" }),
  ]);
  const accepted: { content: string; run: any }[] = [];
  for (const [i, res] of answers.entries()) {
    const body: any = await res.json();
    if (res.status === 200) accepted.push({ content: ["one", "two", "three"][i]!, run: body.run });
    else expect([res.status, body.error.code]).toEqual([409, "conversation_busy"]);
  }
  // Both interrupts got in; a run they cut short ended superseded, never plainly cancelled or failed.
  expect(accepted.map((a) => a.content)).toEqual(expect.arrayContaining(["one", "two"]));
  for (const { run } of accepted)
    expect(
      run.status === "completed" || (run.status === "cancelled" && run.stop_reason === "superseded"),
      JSON.stringify(run),
    ).toBe(true);
  expect(await getJson(`/conversations/${conv.id}/runs/${first.run.id}`)).toMatchObject({
    status: "cancelled",
    stop_reason: "superseded",
  });
  const users = (await transcript(conv.id)).filter((l) => l.startsWith("user: ")).map((l) => l.slice(6));
  expect(users.slice(1).sort()).toEqual(accepted.map((a) => a.content).sort());
  // Runs never overlapped: each one's first message came after the one before it ended.
  const all: any[] = (await getJson(`/conversations/${conv.id}/runs`)).data;
  const began = async (r: any) =>
    new Date(
      (await collectEvents(await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${r.id}/events`))).find(
        (e) => e.event === "message.created",
      )!.data.message.created_at,
    ).getTime();
  // In the order they ran (a queued run's created_at is when it was queued, not when it started).
  const ran = (
    await Promise.all(all.map(async (r) => ({ began: await began(r), ended: new Date(r.completed_at).getTime() })))
  ).sort((a, b) => a.began - b.began);
  for (let i = 1; i < ran.length; i++) expect(ran[i]!.began).toBeGreaterThanOrEqual(ran[i - 1]!.ended);
  // Every request the fake got had a valid history (it answers 400 otherwise, and a run would have failed).
  expect(all.every((r: any) => r.status !== "failed")).toBe(true);
});

test('"wait": false answers 202 with the run at once; the run goes on and ends', async () => {
  const conv = await json(post("/conversations", { provider: "openai" }));
  f.llm.script({ text: "later", chunkDelayMs: 50 });
  const res = await post(`/conversations/${conv.id}/messages`, { content: "in the background", wait: false });
  expect(res.status).toBe(202);
  const { run } = (await res.json()) as any;
  expect(run.status).toBe("running");
  expect(res.headers.get("x-loopd-run-id")).toBe(run.id);
  expect(await runEnded(conv.id, run.id)).toMatchObject({ status: "completed" });
  expect(await transcript(conv.id)).toEqual(["user: in the background", "assistant: later"]);
});

test("bad on_busy and wait values are 400s naming the field, and change nothing", async () => {
  const conv = await json(post("/conversations", { provider: "openai" }));
  for (const body of [
    { content: "x", on_busy: "queue" },
    { content: "x", wait: "no" },
    { content: "x", webhook: { url: "ftp://example.com/hook" } },
  ]) {
    const res = await post(`/conversations/${conv.id}/messages`, body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe("invalid_request");
  }
  expect((await getJson(`/conversations/${conv.id}/runs`)).data).toHaveLength(0);
});
