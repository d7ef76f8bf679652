import { describe, expect, test } from "vitest";
import { rowCounts } from "../../support/helpers/row-counts.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const f = useLoopd();
const post = (payload: unknown) => f.loopd.app.inject({ method: "POST", url: "/ui/chat", payload: payload as object });
const userMessage = (parts: unknown[] = [{ type: "text", text: "Hi" }]) => ({ id: "u1", role: "user", parts });

describe("bad chat requests are the contract's errors and change nothing", () => {
  test.each([
    ["no id", { messages: [userMessage()], trigger: "submit-message" }, 400, "invalid_request"],
    ["no messages", { id: "chat-1", messages: [], trigger: "submit-message" }, 400, "invalid_request"],
    ["an unknown trigger", { id: "chat-1", messages: [userMessage()], trigger: "resubmit" }, 400, "invalid_request"],
    [
      "a user message with no text",
      { id: "chat-1", messages: [userMessage([{ type: "text", text: "  " }])], trigger: "submit-message" },
      400,
      "invalid_request",
    ],
    [
      "a system message last",
      {
        id: "chat-1",
        messages: [{ id: "s", role: "system", parts: [{ type: "text", text: "x" }] }],
        trigger: "submit-message",
      },
      400,
      "invalid_request",
    ],
    [
      "a part that is not an object",
      { id: "chat-1", messages: [userMessage(["text"])], trigger: "submit-message" },
      400,
      "invalid_request",
    ],
    [
      "a bad conversation setting",
      { id: "chat-1", messages: [userMessage()], trigger: "submit-message", conversation: { provider: "nope" } },
      400,
      "invalid_request",
    ],
    [
      "a NUL in the text",
      { id: "chat-1", messages: [userMessage([{ type: "text", text: "a\u0000b" }])], trigger: "submit-message" },
      400,
      "invalid_request",
    ],
    [
      "an unknown conversation id",
      { id: "conv_0mx0000000000000000000000", messages: [userMessage()], trigger: "submit-message" },
      404,
      "not_found",
    ],
    [
      "tool answers for a chat with no conversation",
      { id: "chat-new", messages: [{ id: "a", role: "assistant", parts: [] }], trigger: "submit-message" },
      404,
      "not_found",
    ],
  ])("%s: %i %s", async (_what, body, status, code) => {
    const before = await rowCounts(f.database);
    const res = await post(body);
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: { code, message: expect.any(String), details: expect.any(Object) } });
    expect(res.body).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(await rowCounts(f.database)).toEqual(before);
  });

  test("tool answers when no run waits: 409 run_not_waiting, nothing changes", async () => {
    f.llm.script({ text: "Hi." });
    const first = await post({
      id: "chat-answered",
      messages: [userMessage()],
      trigger: "submit-message",
      conversation: { provider: "openai" },
    });
    expect(first.statusCode).toBe(200);
    expect(first.body).toContain('"type":"finish"');
    const before = await rowCounts(f.database);
    const res = await post({
      id: "chat-answered",
      messages: [userMessage(), { id: "a", role: "assistant", parts: [] }],
      trigger: "submit-message",
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe("run_not_waiting");
    expect(await rowCounts(f.database)).toEqual(before);
  });

  test("a UI stream costs no more writes than loopd's own: one text-delta chunk per text.delta event", async () => {
    f.llm.script({ text: "one two three four five six seven eight nine ten eleven twelve" });
    const res = await post({
      id: "chat-batching",
      messages: [userMessage()],
      trigger: "submit-message",
      conversation: { provider: "anthropic" },
    });
    const chunks = res.body
      .split("\n\n")
      .filter((l) => l.startsWith("data: {"))
      .map((l) => JSON.parse(l.slice(6)) as { type: string; messageId?: string });
    const runId = chunks[0]!.messageId!;
    const conversation = res.headers["x-loopd-run-id"] === runId;
    expect(conversation).toBe(true);
    const run = (await f.loopd.app.inject({ method: "GET", url: `/runs/${runId}` })).json();
    const events = (
      await f.loopd.app.inject({ method: "GET", url: `/conversations/${run.conversation_id}/runs/${runId}/events` })
    ).body;
    const deltas = events.split("\n\n").filter((e) => e.includes("event: text.delta")).length;
    expect(deltas).toBeGreaterThan(1);
    expect(chunks.filter((c) => c.type === "text-delta")).toHaveLength(deltas);
    expect(res.body.endsWith("data: [DONE]\n\n")).toBe(true);
  });
});
