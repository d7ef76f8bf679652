import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import type { Database } from "../../src/store/db.js";
import { startFakeLlm, type FakeLlm } from "../support/fake-llm/server.js";
import { collectEvents, isEvent, readSse, type SseEvent } from "../support/helpers/sse-client.js";
import { startLoopd, type TestLoopd } from "../support/helpers/start-loopd.js";
import { createTestDatabase, type TestDatabase } from "../support/helpers/test-database.js";
import { testTools } from "../support/helpers/test-tools.js";

let llm: FakeLlm;
let testDb: TestDatabase;
let database: Database;
let secondDatabase: Database;
let loopd: TestLoopd;
/** A second loopd process on the same database (same PGlite instance, or its own pool on Postgres). */
let other: TestLoopd;

beforeAll(async () => {
  llm = await startFakeLlm();
  testDb = await createTestDatabase();
  database = await testDb.open();
  secondDatabase = testDb.kind === "postgres" ? await testDb.open() : database;
  const env = { SHUTDOWN_TIMEOUT_MS: "500" };
  loopd = await startLoopd({ database, llm, tools: testTools(), listen: true, env, instanceId: "instance-a" });
  other = await startLoopd({
    database: secondDatabase,
    llm,
    tools: testTools(),
    listen: true,
    env,
    instanceId: "instance-b",
  });
});
afterAll(async () => {
  await loopd?.close();
  await other?.close();
  if (secondDatabase !== database) await secondDatabase?.close();
  await database?.close();
  await testDb?.drop();
  await llm?.close();
});
beforeEach(() => llm.reset());

const bodyOf = async (res: Response | Promise<Response>): Promise<any> => (await res).json();
const json = (body: unknown) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe.each(["anthropic", "openai"] as const)("runs that outlive their connection, through %s", (provider) => {
  async function newConversation(base = loopd.url) {
    const res = await fetch(`${base}/conversations`, json({ provider }));
    return (await res.json()) as { id: string };
  }
  const post = (
    convId: string,
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
    base = loopd.url,
  ) => {
    const init = json(body);
    return fetch(`${base}/conversations/${convId}/messages`, { ...init, headers: { ...init.headers, ...headers } });
  };
  const getJson = async (path: string, base = loopd.url) => (await fetch(`${base}${path}`)).json() as Promise<any>;
  const events = (convId: string, runId: string, headers: Record<string, string> = {}, base = loopd.url, query = "") =>
    fetch(`${base}/conversations/${convId}/runs/${runId}/events${query}`, { headers });

  async function waitForStatus(convId: string, runId: string, done: (s: string) => boolean) {
    for (let i = 0; i < 200; i++) {
      const run = await getJson(`/conversations/${convId}/runs/${runId}`);
      if (done(run.status)) return run;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("run did not reach the expected status");
  }

  test("events arrive as they happen, numbered 1..n without gaps, and the deltas add up to the saved text", async () => {
    const conv = await newConversation();
    const answer = "Tokyo is nine hours ahead of UTC, so it is evening there now.";
    llm.script(
      { toolCalls: [{ name: "get_current_time", input: { timezone: "Asia/Tokyo" } }] },
      { text: answer, chunkDelayMs: 30 },
    );
    const res = await post(conv.id, { content: "Time in Tokyo?", stream: true });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);

    const seen: SseEvent[] = [];
    let statusAtFirstDelta = "";
    for await (const item of readSse(res)) {
      if (!isEvent(item)) continue;
      seen.push(item);
      if (item.event === "text.delta" && !statusAtFirstDelta) {
        const runId = seen[0]!.data.run.id;
        statusAtFirstDelta = (await getJson(`/conversations/${conv.id}/runs/${runId}`)).status;
      }
    }
    // The first delta reached us while the model was still answering.
    expect(statusAtFirstDelta).toBe("running");
    expect(seen.map((e) => e.id)).toEqual(seen.map((_, i) => i + 1));
    expect(seen[0]!.event).toBe("run.created");
    expect(seen[1]).toMatchObject({ event: "message.created", data: { message: { role: "user", seq: 1 } } });
    expect(seen.at(-1)).toMatchObject({ event: "run.completed", data: { run: { status: "completed" } } });
    const types = seen.map((e) => e.event);
    expect(types.indexOf("tool_call.started")).toBeLessThan(types.indexOf("tool_call.completed"));
    expect(seen.find((e) => e.event === "tool_call.completed")!.data).toMatchObject({
      name: "get_current_time",
      is_error: false,
    });
    expect(seen.filter((e) => e.event === "message.created").map((e) => e.data.message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    const deltas = seen.filter((e) => e.event === "text.delta");
    expect(deltas.length).toBeGreaterThan(3);
    const saved = seen.filter((e) => e.event === "message.created").at(-1)!.data.message;
    expect(deltas.map((e) => e.data.delta).join("")).toBe(saved.content[0].text);
    expect(saved.content[0].text).toBe(answer);
  });

  test("Accept: text/event-stream also streams", async () => {
    const conv = await newConversation();
    llm.script({ text: "Hi." });
    const res = await post(conv.id, { content: "Hello" }, { accept: "text/event-stream" });
    const seen = await collectEvents(res);
    expect(seen.at(-1)!.event).toBe("run.completed");
  });

  test("a client that leaves after event k and comes back with Last-Event-ID: k gets exactly k+1..n, from either instance", async () => {
    const conv = await newConversation();
    llm.script({ text: "one two three four five six seven eight nine ten eleven twelve", chunkDelayMs: 25 });
    const res = await post(conv.id, { content: "Count", stream: true });
    const firstPart: SseEvent[] = [];
    for await (const item of readSse(res)) {
      if (!isEvent(item)) continue;
      firstPart.push(item);
      if (firstPart.length === 4) break; // the client drops the connection here
    }
    const runId = firstPart[0]!.data.run.id;
    const k = firstPart.at(-1)!.id;

    const [sameInstance, otherInstance, byQuery] = await Promise.all([
      events(conv.id, runId, { "last-event-id": String(k) }).then(collectEvents),
      events(conv.id, runId, { "last-event-id": String(k) }, other.url).then(collectEvents),
      events(conv.id, runId, {}, other.url, `?after=${k}`).then(collectEvents),
    ]);
    const all = await collectEvents(await events(conv.id, runId));
    expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
    expect(all.slice(0, k)).toEqual(firstPart);
    expect(sameInstance).toEqual(all.slice(k));
    expect(otherInstance).toEqual(all.slice(k));
    expect(byQuery).toEqual(all.slice(k));
    expect(all.at(-1)!.event).toBe("run.completed");
  });

  test("the run finishes with every message saved although nobody was listening", async () => {
    const conv = await newConversation();
    llm.script(
      { toolCalls: [{ name: "calculate", input: { expression: "7*6" } }], chunkDelayMs: 20 },
      { text: "42, as ever.", chunkDelayMs: 20 },
    );
    const res = await post(conv.id, { content: "7*6?", stream: true });
    const reader = readSse(res);
    const first = (await reader.next()).value as SseEvent;
    await reader.return(undefined); // gone after run.created
    const run = await waitForStatus(conv.id, first.data.run.id, (s) => s !== "running");
    expect(run.status).toBe("completed");
    const history = await getJson(`/conversations/${conv.id}/messages`);
    expect(history.data.map((m: any) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  test("a second message during a run is 409 conversation_busy and changes nothing", async () => {
    const conv = await newConversation();
    llm.script({ hang: true });
    const res = await post(conv.id, { content: "First", stream: true });
    const reader = readSse(res);
    const created = (await reader.next()).value as SseEvent;
    const runId = created.data.run.id;

    for (const base of [loopd.url, other.url]) {
      const busy = await post(conv.id, { content: "Second" }, {}, base);
      expect(busy.status).toBe(409);
      expect(await busy.json()).toEqual({
        error: { code: "conversation_busy", message: expect.any(String), details: { active_run_id: runId } },
      });
    }
    const conversation = await getJson(`/conversations/${conv.id}`);
    expect(conversation).toMatchObject({ message_count: 1, active_run_id: runId });
    expect((await getJson(`/conversations/${conv.id}/runs`)).data).toHaveLength(1);

    const cancelled = await (
      await fetch(`${loopd.url}/conversations/${conv.id}/runs/${runId}/cancel`, { method: "POST" })
    ).json();
    expect(cancelled).toMatchObject({ status: "cancelled", stop_reason: "cancelled" });
    await reader.return(undefined);
  });

  test("an idempotent retry returns the same run and creates nothing; another body with that key is 409", async () => {
    const conv = await newConversation();
    llm.script({ text: "Once only." });
    const key = `key-${provider}-${Date.now()}`;
    const first = await bodyOf(post(conv.id, { content: "Say it once" }, { "idempotency-key": key }));
    expect(first.run.status).toBe("completed");

    const retry = await post(conv.id, { content: "Say it once" }, { "idempotency-key": key }, other.url);
    expect(retry.status).toBe(200);
    const again = await bodyOf(retry);
    expect(again.run.id).toBe(first.run.id);
    expect(again.messages).toEqual(first.messages);
    expect(again.output_text).toBe("Once only.");
    expect(llm.requests).toHaveLength(1);

    const replay = await collectEvents(
      await post(conv.id, { content: "Say it once", stream: true }, { "idempotency-key": key }),
    );
    expect(replay[0]!.data.run.id).toBe(first.run.id);
    expect(replay.at(-1)!.event).toBe("run.completed");

    const reused = await post(conv.id, { content: "Something else" }, { "idempotency-key": key });
    expect(reused.status).toBe(409);
    expect((await bodyOf(reused)).error.code).toBe("idempotency_key_reused");
    expect((await getJson(`/conversations/${conv.id}`)).message_count).toBe(2);
    expect((await getJson(`/conversations/${conv.id}/runs`)).data).toHaveLength(1);
  });

  test("an idempotent retry while the run is still going waits for the same run", async () => {
    const conv = await newConversation();
    llm.script({ text: "slow and steady wins the race", chunkDelayMs: 40 });
    const key = `key-live-${provider}-${Date.now()}`;
    const [a, b] = await Promise.all([
      post(conv.id, { content: "Go" }, { "idempotency-key": key }).then(bodyOf),
      new Promise((r) => setTimeout(r, 30)).then(() =>
        post(conv.id, { content: "Go" }, { "idempotency-key": key }, other.url).then(bodyOf),
      ),
    ]);
    expect(b.run.id).toBe(a.run.id);
    expect(b.run.status).toBe("completed");
    expect(b.output_text).toBe("slow and steady wins the race");
    expect(llm.requests).toHaveLength(1);
  });

  test("cancelling mid-answer leaves a valid history and the next message succeeds", async () => {
    const conv = await newConversation();
    llm.script({ hang: true });
    const res = await post(conv.id, { content: "Hang", stream: true });
    const reader = readSse(res);
    const runId = ((await reader.next()).value as SseEvent).data.run.id;
    const cancel = await fetch(`${other.url}/conversations/${conv.id}/runs/${runId}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toMatchObject({ id: runId, status: "cancelled", stop_reason: "cancelled" });
    const rest: SseEvent[] = [];
    for await (const item of reader) if (isEvent(item)) rest.push(item);
    expect(rest.at(-1)!.event).toBe("run.cancelled");

    llm.reset();
    llm.script({ text: "I'm back." });
    const next = await bodyOf(post(conv.id, { content: "Hello?" }));
    expect(next.run.status).toBe("completed");
    const again = await (
      await fetch(`${loopd.url}/conversations/${conv.id}/runs/${runId}/cancel`, { method: "POST" })
    ).json();
    expect(again).toMatchObject({ id: runId, status: "cancelled" });
  });

  test("cancelling during a tool aborts it and answers every unfinished call as cancelled", async () => {
    const conv = await newConversation();
    llm.script({
      toolCalls: [
        { name: "calculate", input: { expression: "1+1" } },
        { name: "wait_for_abort", input: {} },
        { name: "calculate", input: { expression: "2+2" } },
      ],
    });
    const res = await post(conv.id, { content: "Work", stream: true });
    let runId = "";
    const seen: SseEvent[] = [];
    for await (const item of readSse(res)) {
      if (!isEvent(item)) continue;
      seen.push(item);
      if (item.event === "run.created") runId = item.data.run.id;
      if (item.event === "tool_call.started" && item.data.name === "wait_for_abort") {
        void fetch(`${loopd.url}/conversations/${conv.id}/runs/${runId}/cancel`, { method: "POST" });
      }
    }
    expect(seen.at(-1)!.event).toBe("run.cancelled");
    const history = (await getJson(`/conversations/${conv.id}/messages`)).data;
    const results = history.filter((m: any) => m.role === "tool").map((m: any) => m.content[0]);
    expect(results).toHaveLength(3);
    expect(results[0].is_error).toBe(false);
    expect(results[1]).toMatchObject({ name: "wait_for_abort", is_error: true });
    expect(results[1].content).toMatch(/cancel/i);
    expect(results[2]).toMatchObject({ is_error: true });
    expect(results[2].content).toMatch(/cancel/i);

    llm.script({ text: "Fine." });
    expect((await bodyOf(post(conv.id, { content: "Next" }))).run.status).toBe("completed");
  });
});

test("an idle stream gets a ping comment while the model is silent", async () => {
  const pinging = await startLoopd({
    database,
    llm,
    tools: testTools(),
    listen: true,
    ssePingMs: 50,
    env: { SHUTDOWN_TIMEOUT_MS: "200" },
  });
  try {
    const conv = await bodyOf(fetch(`${pinging.url}/conversations`, json({ provider: "openai" })));
    llm.script({ hang: true });
    const res = await fetch(
      `${pinging.url}/conversations/${conv.id}/messages`,
      json({ content: "wait", stream: true }),
    );
    let runId = "";
    for await (const item of readSse(res)) {
      if (isEvent(item) && item.event === "run.created") runId = item.data.run.id;
      if (!isEvent(item) && item.comment === "ping") break;
    }
    expect(runId).not.toBe("");
    await fetch(`${pinging.url}/conversations/${conv.id}/runs/${runId}/cancel`, { method: "POST" });
  } finally {
    await pinging.close();
  }
});

test("a stalled reader holds up neither the run nor memory, and catches up from the database", async () => {
  const conv = await bodyOf(fetch(`${loopd.url}/conversations`, json({ provider: "anthropic" })));
  const words = Array.from({ length: 6000 }, (_, i) => `word${i}`).join(" ");
  llm.script({ text: words });
  const res = await fetch(
    `${loopd.url}/conversations/${conv.id}/messages`,
    json({ content: "Talk a lot", stream: true }),
  );
  const reader = readSse(res);
  const first = (await reader.next()).value as SseEvent;
  const runId = first.data.run.id;
  // The client reads nothing more; the run must still finish.
  let run: any;
  for (let i = 0; i < 400; i++) {
    run = await bodyOf(fetch(`${loopd.url}/conversations/${conv.id}/runs/${runId}`));
    if (run.status !== "running") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(run.status).toBe("completed");
  const rest: SseEvent[] = [];
  for await (const item of reader) if (isEvent(item)) rest.push(item);
  const all = [first, ...rest];
  expect(all.map((e) => e.id)).toEqual(all.map((_, i) => i + 1));
  expect(
    rest
      .filter((e) => e.event === "text.delta")
      .map((e) => e.data.delta)
      .join(""),
  ).toBe(words);
  expect(all.at(-1)!.event).toBe("run.completed");
});
