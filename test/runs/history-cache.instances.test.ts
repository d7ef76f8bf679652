import { afterAll, beforeAll, expect, test } from "vitest";
import { startLoopd, type TestLoopd } from "../support/helpers/start-loopd.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { userTextsIn } from "../support/helpers/wire.js";

// Two instances on one database: each keeps the histories of the runs it ran.
const f = useLoopd();
let other: TestLoopd;
beforeAll(async () => {
  other = await startLoopd({ database: f.database, llm: f.llm });
});
afterAll(async () => {
  await other?.close();
});

const send = async (loopd: TestLoopd, conversationId: string, content: string) =>
  (
    await loopd.app.inject({ method: "POST", url: `/conversations/${conversationId}/messages`, payload: { content } })
  ).json();

test("a history kept from an earlier run is brought up to date with what another instance appended since", async () => {
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "openai" } })
  ).json();
  f.llm.script({ text: "One." }, { text: "Two." }, { text: "Three." });
  expect((await send(f.loopd, conv.id, "First")).output_text).toBe("One.");
  expect(f.loopd.services.histories.size).toBe(1);
  expect((await send(other, conv.id, "Second")).output_text).toBe("Two.");
  expect((await send(f.loopd, conv.id, "Third")).output_text).toBe("Three.");

  const last = f.llm.requests.at(-1)!;
  expect(userTextsIn(last)).toEqual(["First", "Second", "Third"]);
  expect(JSON.stringify(last.body)).toContain("Two.");
  // What the run was sent is exactly the stored history before its answer.
  const stored = (
    await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/messages?format=openai` })
  ).json();
  expect((last.body as { messages: unknown[] }).messages).toEqual(stored.messages.slice(0, -1));
});

test("deleting a conversation forgets its kept history", async () => {
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "anthropic" } })
  ).json();
  f.llm.script({ text: "Kept." });
  await send(f.loopd, conv.id, "Keep this");
  const before = f.loopd.services.histories.size;
  expect((await f.loopd.app.inject({ method: "DELETE", url: `/conversations/${conv.id}` })).statusCode).toBe(204);
  expect(f.loopd.services.histories.size).toBe(before - 1);
});
