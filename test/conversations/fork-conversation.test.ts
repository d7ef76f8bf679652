import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { b64, png } from "../support/helpers/test-images.js";

const f = useLoopd({ listen: true });

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${f.loopd.url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const json = async (res: Promise<Response>): Promise<any> => (await res).json();
const history = async (id: string): Promise<any[]> =>
  (await json(call("GET", `/conversations/${id}/messages?limit=1000`))).data;

/** 1 user, 2 a call, 3 its result, 4 the answer; 5 user, 6 the answer. */
async function twoRuns(extra: Record<string, unknown> = {}) {
  const conv = await json(
    call("POST", "/conversations", {
      provider: "anthropic",
      tools: ["calculate"],
      system: "Be brief.",
      title: "Original",
      metadata: { team: "a" },
      budget: { max_steps: 4 },
      ...extra,
    }),
  );
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, { text: "42" }, { text: "Bye" });
  await call("POST", `/conversations/${conv.id}/messages`, { content: "What is 6*7?" });
  await call("POST", `/conversations/${conv.id}/messages`, { content: "Thanks" });
  return conv;
}

test("a fork copies the settings and messages 1…at_seq (new ids, same seqs), names its original, and runs on its own", async () => {
  const conv = await twoRuns();
  const res = await call("POST", `/conversations/${conv.id}/fork`, { at_seq: 4, title: "Another way" });
  expect(res.status).toBe(201);
  const fork: any = await res.json();
  expect(fork).toMatchObject({
    title: "Another way",
    system: "Be brief.",
    provider: "anthropic",
    tools: ["calculate"],
    metadata: { team: "a" },
    budget: { max_steps: 4 },
    forked_from: { conversation_id: conv.id, seq: 4 },
    message_count: 4,
    active_run_id: null,
  });
  expect(fork.id).not.toBe(conv.id);
  const original = await history(conv.id);
  const copied = await history(fork.id);
  expect(copied.map((m) => [m.seq, m.role, m.content])).toEqual(
    original.slice(0, 4).map((m) => [m.seq, m.role, m.content]),
  );
  expect(copied.every((m, i) => m.id !== original[i].id && m.run_id === null)).toBe(true);

  // The fork goes on from message 4; the original is untouched.
  f.llm.script({ text: "Forked answer" });
  const sent = await json(call("POST", `/conversations/${fork.id}/messages`, { content: "And 6*8?" }));
  expect(sent.run.status).toBe("completed");
  expect((await history(fork.id)).map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(f.llm.requests.at(-1)!.body.messages).toHaveLength(5);
  expect(await history(conv.id)).toEqual(original);
});

test("at_seq may not split a call from its results nor pass the history's end: 400 naming the nearest valid seqs, nothing created", async () => {
  const conv = await twoRuns();
  const before = (await json(call("GET", "/conversations?limit=100"))).data.length;
  const split = await json(call("POST", `/conversations/${conv.id}/fork`, { at_seq: 2 }));
  expect(split.error).toMatchObject({
    code: "invalid_request",
    details: { field: "body.at_seq", nearest_valid: [1, 3] },
  });
  expect(split.error.message).toMatch(/splits a tool call from its results/);
  const past = await json(call("POST", `/conversations/${conv.id}/fork`, { at_seq: 7 }));
  expect(past.error).toMatchObject({ code: "invalid_request", details: { nearest_valid: [6] } });
  for (const body of [{ at_seq: -1 }, { at_seq: "3" }, { at_seq: 1.5 }, { at: 3 }]) {
    const res = await call("POST", `/conversations/${conv.id}/fork`, body);
    expect(res.status).toBe(400);
  }
  expect((await call("POST", "/conversations/conv_nope/fork", {})).status).toBe(404);
  expect((await json(call("GET", "/conversations?limit=100"))).data.length).toBe(before);
  // After the last result of a step is a valid end (3), and so is 0 (nothing copied).
  expect((await json(call("POST", `/conversations/${conv.id}/fork`, { at_seq: 3 }))).message_count).toBe(3);
  expect((await json(call("POST", `/conversations/${conv.id}/fork`, { at_seq: 0 }))).message_count).toBe(0);
});

test("a paused run's messages are outside any fork: the default ends with the last finished run, a seq inside the pause is refused", async () => {
  const conv = await json(
    call("POST", "/conversations", { provider: "anthropic", tools: ["calculate"], approval_required: ["calculate"] }),
  );
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] });
  // Paused for an approval: the history is 1 user, 2 the call it waits on.
  expect((await json(call("POST", `/conversations/${conv.id}/messages`, { content: "What is 6*7?" }))).run.status).toBe(
    "requires_action",
  );
  const inside = await json(call("POST", `/conversations/${conv.id}/fork`, { at_seq: 1 }));
  expect(inside.error).toMatchObject({ code: "invalid_request", details: { nearest_valid: [0] } });
  expect(inside.error.message).toMatch(/inside run run_.*requires_action/);
  const fork = await json(call("POST", `/conversations/${conv.id}/fork`, {}));
  expect(fork).toMatchObject({ message_count: 0, forked_from: { conversation_id: conv.id, seq: 0 } });
});

test("a fork of a fork works, and a deleted original breaks neither", async () => {
  const conv = await twoRuns();
  const fork = await json(call("POST", `/conversations/${conv.id}/fork`, {}));
  expect(fork.forked_from).toEqual({ conversation_id: conv.id, seq: 6 });
  const forkOfFork = await json(call("POST", `/conversations/${fork.id}/fork`, { at_seq: 4 }));
  expect(forkOfFork).toMatchObject({ forked_from: { conversation_id: fork.id, seq: 4 }, message_count: 4 });
  expect((await call("DELETE", `/conversations/${conv.id}`)).status).toBe(204);
  expect((await history(fork.id)).length).toBe(6);
  f.llm.script({ text: "Still here" });
  expect(
    (await json(call("POST", `/conversations/${forkOfFork.id}/messages`, { content: "Hello again" }))).run.status,
  ).toBe("completed");
  expect((await json(call("GET", `/conversations/${fork.id}`))).forked_from).toEqual({
    conversation_id: conv.id,
    seq: 6,
  });
});

test("a fork keeps the images of the messages it copies: its attachment route serves them, its next call sends their bytes, and both outlive the original", async () => {
  const image = png(40, 30, 5);
  const later = png(20, 20, 9);
  const conv = await json(call("POST", "/conversations", { provider: "anthropic", tools: [] }));
  f.llm.script({ text: "A small picture." }, { text: "Another." });
  await call("POST", `/conversations/${conv.id}/messages`, {
    content: [
      { type: "text", text: "What is this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: b64(image) } },
    ],
  });
  await call("POST", `/conversations/${conv.id}/messages`, {
    content: [
      { type: "text", text: "And this?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: b64(later) } },
    ],
  });
  const [first] = await history(conv.id);
  const attachmentId = first.content[1].attachment_id;
  const fork = await json(call("POST", `/conversations/${conv.id}/fork`, { at_seq: 2 }));
  // Only what its messages refer to: the second image stays the original's.
  const laterId = (await history(conv.id))[2].content[1].attachment_id;
  expect((await call("GET", `/conversations/${fork.id}/attachments/${laterId}`)).status).toBe(404);
  expect((await call("DELETE", `/conversations/${conv.id}`)).status).toBe(204);
  const served = await call("GET", `/conversations/${fork.id}/attachments/${attachmentId}`);
  expect(served.status).toBe(200);
  expect(Buffer.from(await served.arrayBuffer())).toEqual(image);
  f.llm.script({ text: "Still a small picture." });
  const sent = await json(call("POST", `/conversations/${fork.id}/messages`, { content: "Look again." }));
  expect(sent.run.status).toBe("completed");
  const blocks = f.llm.requests.at(-1)!.body.messages[0].content;
  expect(blocks.find((b: any) => b.type === "image").source.data).toBe(b64(image));
});
