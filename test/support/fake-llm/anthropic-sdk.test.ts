import type { APIError } from "@anthropic-ai/sdk";
import Anthropic, { APIUserAbortError, BadRequestError, InternalServerError } from "@anthropic-ai/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, type FakeStop, startFakeLlm } from "./server.js";

/** The real Anthropic SDK against the fake: what loopd's Anthropic provider will see. */

let llm: FakeLlm;
let client: Anthropic;
beforeAll(async () => {
  llm = await startFakeLlm();
  client = new Anthropic({ apiKey: "test", baseURL: llm.url });
});
afterEach(() => llm.reset());
afterAll(() => llm.close());

const base = { model: "claude-test", max_tokens: 256 } as const;
const hello: Anthropic.MessageParam[] = [{ role: "user", content: "Hello" }];
type Params = Anthropic.MessageCreateParamsNonStreaming;

describe("answers", () => {
  it("returns the scripted text from a non-streaming create", async () => {
    llm.script({ text: "Paris is the capital of France." });
    const message = await client.messages.create({ ...base, messages: hello });
    expect(message.content).toEqual([{ type: "text", text: "Paris is the capital of France." }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.model).toBe("claude-test");
    expect(message.id).toMatch(/^msg_01[A-Za-z0-9]{22}$/);
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]).toMatchObject({
      api: "anthropic",
      path: "/v1/messages",
      stream: false,
      body: { messages: hello },
    });
    expect(llm.requests[0]!.headers["anthropic-version"]).toBeDefined();
  });

  it("streams the text in several word deltas that add up to the script", async () => {
    const text = "The quick brown fox jumps over the lazy dog.";
    llm.script({ text });
    const deltas: string[] = [];
    const stream = client.messages.stream({ ...base, messages: hello }).on("text", (delta) => deltas.push(delta));
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: "text", text }]);
    expect(deltas.length).toBeGreaterThanOrEqual(9);
    expect(deltas.join("")).toBe(text);
    expect(llm.requests[0]!.stream).toBe(true);
  });

  it.each([false, true])("returns tool calls with verbatim ids and the scripted input (stream: %s)", async (stream) => {
    const input = { city: "Paris", days: 3, units: { temp: "C" }, tags: ["a", "b"] };
    llm.script({
      text: "Let me check.",
      toolCalls: [{ id: "toolu_01AAAAAAAAAAAAAAAAAAAAAA", name: "get_weather", input }, { name: "get_time" }],
    });
    const message = stream
      ? await client.messages.stream({ ...base, messages: hello }).finalMessage()
      : await client.messages.create({ ...base, messages: hello });
    expect(message.stop_reason).toBe("tool_use");
    const [text, weather, time] = message.content;
    expect(text).toEqual({ type: "text", text: "Let me check." });
    expect(weather).toMatchObject({
      type: "tool_use",
      id: "toolu_01AAAAAAAAAAAAAAAAAAAAAA",
      name: "get_weather",
      input,
    });
    expect(time).toMatchObject({ type: "tool_use", name: "get_time", input: {} });
    expect((time as Anthropic.ToolUseBlock).id).toMatch(/^toolu_01[A-Za-z0-9]{22}$/);
  });

  it("splits the tool input JSON over several input_json_delta events and sends rawArguments verbatim", async () => {
    const rawArguments = '{"path": "a.txt", "content": "unterminated';
    llm.script(
      { toolCalls: [{ name: "write", input: { path: "a.txt", content: "hello world" } }] },
      { toolCalls: [{ name: "write", rawArguments }] },
    );
    for (const expected of ['{"path":"a.txt","content":"hello world"}', rawArguments]) {
      const pieces: string[] = [];
      for await (const event of await client.messages.create({ ...base, messages: hello, stream: true })) {
        if (event.type === "content_block_delta" && event.delta.type === "input_json_delta")
          pieces.push(event.delta.partial_json);
      }
      expect(pieces.filter((piece) => piece !== "").length).toBeGreaterThan(3);
      expect(pieces.join("")).toBe(expected);
    }
  });

  it.each<[FakeStop, string]>([
    ["end", "end_turn"],
    ["tool", "tool_use"],
    ["max_tokens", "max_tokens"],
    ["refusal", "refusal"],
    ["pause_turn", "pause_turn"],
    ["context_window_exceeded", "model_context_window_exceeded"],
  ])("maps stop %s to stop_reason %s", async (stop, stopReason) => {
    llm.script({ text: "partial", stop }, { text: "partial", stop });
    expect((await client.messages.create({ ...base, messages: hello })).stop_reason).toBe(stopReason);
    expect((await client.messages.stream({ ...base, messages: hello }).finalMessage()).stop_reason).toBe(stopReason);
  });

  it("reports scripted usage, and estimates it when not scripted", async () => {
    const usage = { input: 120, output: 33, cacheRead: 1000, cacheWrite: 50 };
    llm.script({ text: "hi", usage }, { text: "hi", usage }, { text: "a longer answer than the other one" });
    const expected = {
      input_tokens: 120,
      output_tokens: 33,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 50,
    };
    expect((await client.messages.create({ ...base, messages: hello })).usage).toMatchObject(expected);
    expect((await client.messages.stream({ ...base, messages: hello }).finalMessage()).usage).toMatchObject(expected);
    const estimated = (await client.messages.create({ ...base, messages: hello })).usage;
    expect(estimated.input_tokens).toBeGreaterThan(0);
    expect(estimated.output_tokens).toBeGreaterThan(1);
    expect(estimated.cache_read_input_tokens).toBe(0);
  });

  it("delivers streamed chunks incrementally when chunkDelayMs is set", async () => {
    llm.script({ text: "one two three four", chunkDelayMs: 60 });
    const arrivals: number[] = [];
    await client.messages
      .stream({ ...base, messages: hello })
      .on("text", () => arrivals.push(Date.now()))
      .finalMessage();
    expect(arrivals).toHaveLength(4);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(150);
  });
});

describe("errors and retries", () => {
  it("retries a 429 inside the SDK and then succeeds", async () => {
    llm.script({ status: 429 }, { text: "after the rate limit" });
    const message = await client.messages.create({ ...base, messages: hello });
    expect(message.content).toEqual([{ type: "text", text: "after the rate limit" }]);
    expect(llm.requests.map((r) => r.headers["x-stainless-retry-count"])).toEqual(["0", "1"]);
  });

  it("throws after the SDK's two retries when every answer is a 500", async () => {
    llm.respond = () => ({ status: 500, message: "boom" });
    const error = await client.messages.create({ ...base, messages: hello }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as APIError).error).toMatchObject({ type: "error", error: { type: "api_error", message: "boom" } });
    expect((error as APIError).requestID).toMatch(/^req_011C/);
    expect(llm.requests).toHaveLength(3);
  });

  it("fails a stream halfway with an error event holding overloaded_error, which the SDK throws as an APIError", async () => {
    llm.script({ text: "one two three four five six", errorAfterChunks: 5 });
    const texts: string[] = [];
    const error = await (async () => {
      for await (const event of await client.messages.create({ ...base, messages: hello, stream: true }))
        if (event.type === "content_block_delta" && event.delta.type === "text_delta") texts.push(event.delta.text);
    })().catch((e: unknown) => e);
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.join("")).not.toBe("one two three four five six");
    expect(error).toMatchObject({ status: undefined, type: "overloaded_error" });
    expect((error as APIError).error).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    });
  });

  it("sends the scripted Retry-After alone: the default retry-after-ms is for unnamed waits", async () => {
    llm.script({ status: 529, headers: { "retry-after": "120" } });
    const error = await client.messages
      .create({ ...base, messages: hello }, { maxRetries: 0 })
      .catch((e: unknown) => e);
    expect((error as APIError).status).toBe(529);
    expect((error as APIError).headers?.get("retry-after")).toBe("120");
    expect((error as APIError).headers?.get("retry-after-ms")).toBeNull();
  });

  it("answers 500 'fake llm: no scripted turn' when nothing is scripted", async () => {
    const error = await client.messages
      .create({ ...base, messages: hello }, { maxRetries: 0 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as APIError).error).toMatchObject({ error: { message: "fake llm: no scripted turn" } });
  });

  it.each([false, true])("lets an AbortSignal end a hanging request (stream: %s)", async (stream) => {
    llm.script({ hang: true }, { text: "still alive" });
    const signal = AbortSignal.timeout(100);
    const call = stream
      ? client.messages.stream({ ...base, messages: hello }, { signal }).finalMessage()
      : client.messages.create({ ...base, messages: hello }, { signal });
    await expect(call).rejects.toBeInstanceOf(APIUserAbortError);
    const next = await client.messages.create({ ...base, messages: hello });
    expect(next.content).toEqual([{ type: "text", text: "still alive" }]);
  });
});

const toolUse = (id: string): Anthropic.ToolUseBlockParam => ({
  type: "tool_use",
  id,
  name: "lookup",
  input: { q: id },
});
const toolResult = (id: string): Anthropic.ToolResultBlockParam => ({
  type: "tool_result",
  tool_use_id: id,
  content: "ok",
});
const tools: Anthropic.Tool[] = [
  { name: "lookup", input_schema: { type: "object", properties: { q: { type: "string" } } } },
];

describe("history validation", () => {
  it("accepts a well-formed history with parallel tool calls and consumes the turn", async () => {
    llm.script({ text: "done" });
    const messages: Anthropic.MessageParam[] = [
      { role: "user", content: "look two things up" },
      { role: "assistant", content: [{ type: "text", text: "Looking." }, toolUse("toolu_01A"), toolUse("toolu_01B")] },
      { role: "user", content: [toolResult("toolu_01A"), toolResult("toolu_01B"), { type: "text", text: "thanks" }] },
    ];
    const message = await client.messages.create({
      ...base,
      messages,
      tools,
      tool_choice: { type: "tool", name: "lookup" },
    });
    expect(message.content).toEqual([{ type: "text", text: "done" }]);
    expect(llm.pending()).toBe(0);
  });

  const cases: Array<[string, Partial<Params> & Record<string, unknown>, string]> = [
    ["a missing model", { model: undefined }, "model: Field required"],
    ["an empty model", { model: "" }, "model: String should have at least 1 character"],
    ["a missing max_tokens", { max_tokens: undefined }, "max_tokens: Field required"],
    ["no messages", { messages: [] }, "messages: at least one message is required"],
    [
      "a first message from the assistant",
      { messages: [{ role: "assistant", content: "Hi" }] },
      'messages: first message must use the "user" role',
    ],
    [
      "a tool_use without its tool_result in the next message",
      {
        messages: [
          ...hello,
          { role: "assistant", content: [toolUse("toolu_01A"), toolUse("toolu_01B")] },
          { role: "user", content: [toolResult("toolu_01A")] },
        ],
      },
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01B. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ],
    [
      "a tool_use as the last message",
      { messages: [...hello, { role: "assistant", content: [toolUse("toolu_01A")] }] },
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ],
    [
      "a tool_result for a tool_use of the previous message",
      {
        messages: [
          ...hello,
          { role: "assistant", content: [toolUse("toolu_01A")] },
          { role: "user", content: [toolResult("toolu_01A"), toolResult("toolu_01Z")] },
        ],
      },
      "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01Z. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ],
    [
      "an empty text block",
      { messages: [{ role: "user", content: [{ type: "text", text: "" }] }] },
      "messages: text content blocks must be non-empty",
    ],
    [
      "an empty message",
      { messages: [...hello, { role: "assistant", content: [] }, { role: "user", content: "again" }] },
      "messages.1: all messages must have non-empty content except for the optional final assistant message",
    ],
    [
      "a duplicate tool_use id",
      {
        messages: [
          ...hello,
          { role: "assistant", content: [toolUse("toolu_01A")] },
          { role: "user", content: [toolResult("toolu_01A")] },
          { role: "assistant", content: [toolUse("toolu_01A")] },
          { role: "user", content: [toolResult("toolu_01A")] },
        ],
      },
      "messages.3.content.0: `tool_use` ids must be unique",
    ],
    [
      "a tool input_schema that is not an object",
      { tools: [{ name: "list", input_schema: { type: "array" } as unknown as Anthropic.Tool.InputSchema }] },
      "tools.0.custom.input_schema.type: Input should be 'object'",
    ],
    [
      "a tool_choice naming an unknown tool",
      { tools, tool_choice: { type: "tool", name: "nope" } },
      "tool_choice.name: Tool 'nope' not found in provided tools",
    ],
  ];

  it.each(cases)("rejects %s with 400 before consuming a turn", async (_name, override, expected) => {
    llm.script({ text: "must not be used" });
    const params = { ...base, messages: hello, ...override } as Params;
    const error = await client.messages.create(params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).status).toBe(400);
    expect((error as APIError).error).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: expected },
    });
    expect(llm.pending()).toBe(1);
    expect(llm.requests).toHaveLength(1);
  });
});
