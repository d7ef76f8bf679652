import { validateUIMessages, type UIMessage } from "ai";
import { describe, expect, test } from "vitest";
import { chatWith } from "../../support/helpers/headless-chat.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";
import { toolResultsIn } from "../../support/helpers/wire.js";

const f = useLoopd({ listen: true });

type Metadata = { run_id: string; status?: string; stop_reason?: string | null; usage?: Record<string, number | null> };
type Message = UIMessage<Metadata>;

describe.each(["anthropic", "openai"] as const)("the AI SDK's chat protocol through %s", (provider) => {
  const newChat = (extra: Record<string, unknown> = {}, id?: string) =>
    chatWith<Message>({ url: f.loopd.url, ...(id && { id }), body: { conversation: { provider, ...extra } } });

  test("a message and its streamed answer: one assistant message named by the run, with its text, usage and status", async () => {
    f.llm.script({ text: "Hello from the model, streamed in pieces.", usage: { input: 30, output: 9 } });
    const chat = newChat();
    await chat.sendMessage({ text: "Say hello" });
    expect(chat.error).toBeUndefined();
    expect(chat.status).toBe("ready");
    const [user, answer] = chat.messages;
    expect(user).toMatchObject({ role: "user", parts: [{ type: "text", text: "Say hello" }] });
    expect(answer!.role).toBe("assistant");
    expect(answer!.parts.filter((p) => p.type === "text")).toEqual([
      expect.objectContaining({ text: "Hello from the model, streamed in pieces.", state: "done" }),
    ]);
    expect(answer!.metadata).toMatchObject({
      run_id: answer!.id,
      status: "completed",
      stop_reason: "end_turn",
      usage: { input_tokens: 30, output_tokens: 9 },
    });
    // The chat id named a new conversation, which shows it.
    const conversations = (await f.loopd.app.inject({ method: "GET", url: "/conversations?limit=100" })).json()
      .data as { id: string; chat_id: string | null }[];
    const conversation = conversations.find((c) => c.chat_id === chat.id)!;
    expect(conversation).toBeDefined();
    const run = (
      await f.loopd.app.inject({ method: "GET", url: `/conversations/${conversation.id}/runs/${answer!.id}` })
    ).json();
    expect(run).toMatchObject({ status: "completed", provider });
  });

  test("a tool step: the call's input and output, then the answer, in one assistant message; the same chat id keeps its conversation", async () => {
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] }, { text: "It is 42." });
    const chat = newChat();
    await chat.sendMessage({ text: "What is 6*7?" });
    const answer = chat.messages.at(-1)!;
    const tool = answer.parts.find((p) => p.type === "tool-calculate") as {
      state: string;
      input: unknown;
      output: string;
      toolCallId: string;
    };
    expect(tool).toMatchObject({ state: "output-available", input: { expression: "6*7" } });
    expect(JSON.parse(tool.output)).toMatchObject({ result: 42 });
    expect(answer.parts.filter((p) => p.type === "step-start")).toHaveLength(2);
    expect(answer.parts.at(-1)).toMatchObject({ type: "text", text: "It is 42." });
    // The model was sent the result under the provider's own id.
    expect(toolResultsIn(f.llm.requests.at(-1)!).map((r) => r.id)).toEqual([tool.toolCallId]);

    f.llm.script({ text: "Still here." });
    await chat.sendMessage({ text: "And again?" });
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const owned = (
      (await f.loopd.app.inject({ method: "GET", url: "/conversations?limit=100" })).json().data as {
        chat_id: string | null;
        message_count: number;
      }[]
    ).filter((c) => c.chat_id === chat.id);
    expect(owned).toHaveLength(1);
    expect(owned[0]!.message_count).toBe(6);
  });

  test("GET …/messages seeds a new client: valid UI messages, and the seeded chat goes on", async () => {
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "2+2" } }] }, { text: "Four." });
    const first = newChat();
    await first.sendMessage({ text: "2+2?" });
    const res = await f.loopd.app.inject({ method: "GET", url: `/ui/chat/${first.id}/messages` });
    expect(res.statusCode).toBe(200);
    const seeded = await validateUIMessages<Message>({ messages: res.json() });
    expect(seeded.map((m) => [m.role, m.id])).toEqual([
      ["user", expect.stringMatching(/^msg_/)],
      ["assistant", first.messages[1]!.id],
    ]);
    expect(seeded[1]!.parts.map((p) => p.type)).toEqual(first.messages[1]!.parts.map((p) => p.type));
    expect(seeded[1]!.parts.find((p) => p.type === "tool-calculate")).toMatchObject({ state: "output-available" });

    const second = newChat({}, first.id);
    second.messages = seeded;
    f.llm.script({ text: "Five, if you add one." });
    await second.sendMessage({ text: "Plus one?" });
    expect(second.messages.at(-1)!.parts.at(-1)).toMatchObject({ type: "text", text: "Five, if you add one." });
    // The model saw the whole history, kept by loopd, not what the client sent.
    expect(f.llm.requests.at(-1)!.body.messages.length).toBeGreaterThanOrEqual(5);
  });
});
