/**
 * Each tenant holds at most `MAX_STREAMS_PER_TENANT` open streams on a
 * server: past it that tenant gets `429 too_many_streams` (a streaming
 * message then creates nothing), while another tenant still streams; the
 * places come back when the streams end.
 */
import { expect, test } from "vitest";
import { isEvent, readSse } from "../support/helpers/sse-client.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { rowCounts } from "../support/helpers/row-counts.js";

const PER_TENANT = 3;
const f = useLoopd({
  listen: true,
  env: { API_KEYS_REQUIRED: "true", MAX_STREAMS: "20", MAX_STREAMS_PER_TENANT: String(PER_TENANT) },
});

const headersOf = (key: string) => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });
const post = (key: string, path: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${f.loopd.url}${path}`, { method: "POST", headers: headersOf(key), body: JSON.stringify(body), signal });
const newConversation = async (key: string) =>
  ((await (await post(key, "/conversations", { provider: "openai" })).json()) as { id: string }).id;

/** Reads a stream's first event, so it is surely open when this resolves, and keeps it open (a loop's break would end it). */
async function openStream(res: Response): Promise<void> {
  expect(res.status).toBe(200);
  const reader = readSse(res);
  for (let next = await reader.next(); !next.done && !isEvent(next.value); next = await reader.next());
}

test("a tenant at its share of streams gets 429 too_many_streams while another tenant streams, and gets its places back when its streams end", async () => {
  const a = (await f.loopd.services.store.keys.create({ tenant: "flood", name: null })).key;
  const b = (await f.loopd.services.store.keys.create({ tenant: "quiet", name: null })).key;
  const convA = await newConversation(a);
  const hold = new AbortController();
  f.llm.script({ hang: true });
  const first = await post(a, `/conversations/${convA}/messages`, { content: "Hold on", stream: true }, hold.signal);
  const runId = first.headers.get("x-loopd-run-id")!;
  const events = `${f.loopd.url}/conversations/${convA}/runs/${runId}/events`;
  const follow = (key: string, signal?: AbortSignal) => fetch(events, { headers: headersOf(key), signal });
  await openStream(first);
  await Promise.all(Array.from({ length: PER_TENANT - 1 }, async () => openStream(await follow(a, hold.signal))));

  const refused = await follow(a);
  expect(refused.status).toBe(429);
  expect(await refused.json()).toMatchObject({
    error: { code: "too_many_streams", details: { max_streams_per_tenant: PER_TENANT } },
  });
  // A streaming message past the share starts nothing; the same message without a stream is taken.
  const other = await newConversation(a);
  const before = await rowCounts(f.database);
  const message = await post(a, `/conversations/${other}/messages`, { content: "Hi", stream: true });
  expect(message.status).toBe(429);
  expect(((await message.json()) as { error: { code: string } }).error.code).toBe("too_many_streams");
  expect(await rowCounts(f.database)).toEqual(before);

  // The other tenant streams as if the first held nothing.
  const convB = await newConversation(b);
  f.llm.script({ text: "Hello from B." });
  const streamB = await post(b, `/conversations/${convB}/messages`, { content: "Hi", stream: true });
  expect(streamB.status).toBe(200);
  const kinds: string[] = [];
  for await (const value of readSse(streamB)) if (isEvent(value)) kinds.push(value.event);
  expect(kinds.at(-1)).toBe("run.completed");

  // The places come back when the streams end (the run cancelled, the followers gone).
  await fetch(`${f.loopd.url}/conversations/${convA}/runs/${runId}/cancel`, {
    method: "POST",
    headers: { authorization: `Bearer ${a}` },
  });
  hold.abort();
  // The run's end closes every stream of it: a new one is then taken (the ended run's events, to their end).
  let again = await follow(a);
  for (let i = 0; i < 100 && again.status === 429; i++) again = await follow(a);
  expect(again.status).toBe(200);
  await again.body?.cancel();
  // All three places came back: as many streams at once as the share again.
  const hold2 = new AbortController();
  const opened = await Promise.all(Array.from({ length: PER_TENANT }, () => follow(a, hold2.signal)));
  expect(opened.map((r) => r.status)).toEqual(Array(PER_TENANT).fill(200));
  hold2.abort();
});
