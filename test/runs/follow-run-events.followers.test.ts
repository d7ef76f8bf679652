import { expect, test } from "vitest";
import { collectEvents, isEvent, readSse, type SseEvent } from "../support/helpers/sse-client.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const MAX_STREAMS = 210;
const f = useLoopd({
  listen: true,
  env: { MAX_STREAMS: String(MAX_STREAMS), MAX_STREAMS_PER_TENANT: String(MAX_STREAMS) },
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
const newConversation = async (provider = "openai") =>
  (await (await post("/conversations", { provider })).json()) as { id: string };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = async (table: string) =>
  Number(
    (
      (await f.database.db.execute(`select count(*)::int as n from ${table}` as never)) as unknown as {
        rows: { n: number }[];
      }
    ).rows[0]!.n,
  );

/** Reads a stream until `n` events have come, and keeps it open (until `signal` aborts). */
async function openFollower(url: string, n: number, signal: AbortSignal): Promise<SseEvent[]> {
  const res = await fetch(url, { signal });
  const events: SseEvent[] = [];
  const reader = readSse(res);
  while (events.length < n) {
    const { value, done } = await reader.next();
    if (done) throw new Error(`the stream ended after ${events.length} events`);
    if (isEvent(value)) events.push(value);
  }
  return events;
}

test("200 idle followers of a run cost the database nothing while wake-ups flow", async () => {
  const conv = await newConversation();
  f.llm.script({ hang: true });
  const hold = new AbortController();
  const stream = await post(`/conversations/${conv.id}/messages`, { content: "Think slowly", stream: true });
  const runId = stream.headers.get("x-loopd-run-id")!;
  // On a server, wake-ups from other processes arrive through LISTEN: wait until it is in place.
  for (let i = 0; i < 100 && f.testDb.kind === "postgres" && !f.loopd.services.broadcast.listening; i++)
    await sleep(50);

  const url = `${f.loopd.url}/conversations/${conv.id}/runs/${runId}/events`;
  const followers = await Promise.all(Array.from({ length: 200 }, () => openFollower(url, 2, hold.signal)));
  expect(followers.every((events) => events.map((e) => e.event).join() === "run.created,message.created")).toBe(true);
  await sleep(300); // every follower is waiting now

  const before = f.database.statements();
  await sleep(2_000);
  const during = f.database.statements() - before;
  // Only the lease renewals of the one run (about one a second) and perhaps a sweep: no follower polls.
  expect(during).toBeLessThan(20);

  hold.abort();
  await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${runId}/cancel`, { method: "POST" });
  await stream.body?.cancel();
});

test("past MAX_STREAMS a new stream is a 503 with Retry-After, and a refused message creates nothing", async () => {
  const conv = await newConversation();
  f.llm.script({ hang: true });
  const hold = new AbortController();
  const first = await fetch(`${f.loopd.url}/conversations/${conv.id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: "Hold on", stream: true }),
    signal: hold.signal,
  });
  const runId = first.headers.get("x-loopd-run-id")!;
  const url = `${f.loopd.url}/conversations/${conv.id}/runs/${runId}/events`;
  await Promise.all(Array.from({ length: MAX_STREAMS - 1 }, () => openFollower(url, 1, hold.signal)));

  const refused = await fetch(url);
  expect(refused.status).toBe(503);
  expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(await refused.json()).toMatchObject({ error: { code: "unavailable", details: { max_streams: MAX_STREAMS } } });

  const other = await newConversation();
  const [messages, runs] = [await count("messages"), await count("runs")];
  const message = await post(`/conversations/${other.id}/messages`, { content: "Hi", stream: true });
  expect(message.status).toBe(503);
  expect([await count("messages"), await count("runs")]).toEqual([messages, runs]);
  // Not streaming, the same message is taken.
  f.llm.script({ text: "Hello." });
  expect((await post(`/conversations/${other.id}/messages`, { content: "Hi" })).status).toBe(200);

  await fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${runId}/cancel`, { method: "POST" });
  hold.abort();
  // The places are given back when the streams end.
  for (let i = 0; i < 100 && (await fetch(url)).status === 503; i++) await sleep(50);
  const again = await fetch(url);
  expect(again.status).toBe(200);
  await again.body?.cancel();
});

test("deleting a conversation ends the streams of its run with an event that says so", async () => {
  const conv = await newConversation("anthropic");
  f.llm.script({ hang: true });
  const stream = await post(`/conversations/${conv.id}/messages`, { content: "Hang on", stream: true });
  const runId = stream.headers.get("x-loopd-run-id")!;
  const reader = readSse(stream);
  const seen: SseEvent[] = [];
  while (seen.at(-1)?.event !== "message.created") {
    const { value } = await reader.next();
    if (value && isEvent(value)) seen.push(value);
  }
  const follower = fetch(`${f.loopd.url}/conversations/${conv.id}/runs/${runId}/events`).then(collectEvents);
  await sleep(200);

  expect((await fetch(`${f.loopd.url}/conversations/${conv.id}`, { method: "DELETE" })).status).toBe(204);
  for await (const item of reader) if (isEvent(item)) seen.push(item);
  const deleted = { event: "conversation.deleted", data: { conversation_id: conv.id, run_id: runId } };
  expect(seen.at(-1)).toMatchObject({ ...deleted, id: seen.at(-2)!.id + 1 });
  expect((await follower).at(-1)).toMatchObject(deleted);
});
