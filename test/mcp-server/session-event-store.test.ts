/**
 * A session's resumability store (Last-Event-ID): what it replays, and its
 * bound in bytes as well as in messages, so a client that asks for large
 * answers again and again cannot make loopd hold them all.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { expect, test } from "vitest";
import { createSessionEventStore } from "../../src/mcp-server/session-event-store.js";

const answer = (id: number, bytes: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  result: { content: [{ type: "text", text: "x".repeat(bytes) }] },
});

const replayed = async (store: ReturnType<typeof createSessionEventStore>, after: string) => {
  const sent: JSONRPCMessage[] = [];
  await store.replayEventsAfter(after, { send: async (_id, message) => void sent.push(message) });
  return sent;
};

test("a resumed stream gets the messages of its stream after the last one it saw, no other stream's", async () => {
  const store = createSessionEventStore();
  const first = await store.storeEvent("a", answer(1, 10));
  await store.storeEvent("b", answer(2, 10));
  await store.storeEvent("a", answer(3, 10));
  expect(await store.getStreamIdForEventId!(first)).toBe("a");
  expect((await replayed(store, first)).map((m) => ("id" in m ? m.id : null))).toEqual([3]);
});

test("bounded in bytes: of 100 answers of 100 KB it keeps at most 4 MiB, the newest; the first no longer replays", async () => {
  const store = createSessionEventStore();
  const ids: string[] = [];
  for (let i = 0; i < 100; i++) ids.push(await store.storeEvent("a", answer(i, 100_000)));
  const known: string[] = [];
  for (const id of ids) if ((await store.getStreamIdForEventId!(id)) === "a") known.push(id);
  expect(known.length * 100_000).toBeLessThanOrEqual(4 * 1024 * 1024);
  expect(known.length).toBeGreaterThan(10);
  expect(known.at(-1)).toBe(ids[99]);
  expect(await replayed(store, ids[0]!)).toEqual([]);
  // The newest answer is there for a stream that broke just before it.
  expect((await replayed(store, ids[98]!)).map((m) => ("id" in m ? m.id : null))).toEqual([99]);
});

test("an answer larger than the bound is kept until the next message, so a stream that broke just before it still gets it", async () => {
  const store = createSessionEventStore();
  const before = await store.storeEvent("a", answer(1, 10));
  await store.storeEvent("a", answer(2, 5 * 1024 * 1024));
  expect((await replayed(store, before)).map((m) => ("id" in m ? m.id : null))).toEqual([2]);
});
