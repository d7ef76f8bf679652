import type { APIError } from "openai";
import OpenAI, { APIUserAbortError, BadRequestError, InternalServerError } from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, type FakeStop, startFakeLlm } from "./server.js";

/** The real OpenAI SDK against the fake: what loopd's OpenAI provider will see. */

let llm: FakeLlm;
let client: OpenAI;
beforeAll(async () => {
  llm = await startFakeLlm();
  client = new OpenAI({ apiKey: "test", baseURL: `${llm.url}/v1` });
});
afterEach(() => llm.reset());
afterAll(() => llm.close());

const model = "gpt-test";
const hello: ChatCompletionMessageParam[] = [{ role: "user", content: "Hello" }];

interface Accumulated {
  text: string;
  textChunks: number;
  tools: Array<{ id: string; name: string; arguments: string; pieces: number }>;
  finishReason: string | null;
  usage: ChatCompletionChunk["usage"] | undefined;
}

/** Fold a chunk stream the way a provider must: content appended, tool calls by index. */
async function accumulate(stream: AsyncIterable<ChatCompletionChunk>): Promise<Accumulated> {
  const out: Accumulated = { text: "", textChunks: 0, tools: [], finishReason: null, usage: undefined };
  for await (const chunk of stream) {
    if (chunk.usage) out.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    if (choice.delta.content) {
      out.text += choice.delta.content;
      out.textChunks++;
    }
    for (const call of choice.delta.tool_calls ?? []) {
      const tool = (out.tools[call.index] ??= { id: "", name: "", arguments: "", pieces: 0 });
      if (call.id) tool.id = call.id;
      if (call.function?.name) tool.name = call.function.name;
      if (call.function?.arguments) {
        tool.arguments += call.function.arguments;
        tool.pieces++;
      }
    }
    if (choice.finish_reason) out.finishReason = choice.finish_reason;
  }
  return out;
}

const streamed = (
  extra: Partial<OpenAI.ChatCompletionCreateParamsStreaming> = {},
  options: OpenAI.RequestOptions = {},
) => client.chat.completions.create({ model, messages: hello, stream: true, ...extra }, options);

describe("answers", () => {
  it("returns the scripted text from a non-streaming create", async () => {
    llm.script({ text: "Paris is the capital of France." });
    const completion = await client.chat.completions.create({ model, messages: hello });
    expect(completion.choices[0]!.message).toMatchObject({
      role: "assistant",
      content: "Paris is the capital of France.",
    });
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(llm.requests[0]).toMatchObject({
      api: "openai",
      path: "/v1/chat/completions",
      stream: false,
      body: { model, messages: hello },
    });
    expect(llm.requests[0]!.headers.authorization).toBe("Bearer test");
  });

  it("streams the text in several word chunks that add up to the script", async () => {
    const text = "The quick brown fox jumps over the lazy dog.";
    llm.script({ text });
    const result = await accumulate(await streamed());
    expect(result.text).toBe(text);
    expect(result.textChunks).toBe(9);
    expect(result.finishReason).toBe("stop");
    expect(llm.requests[0]!.stream).toBe(true);
  });

  it("streams tool calls with verbatim ids, the name first, and the arguments over several chunks", async () => {
    const input = { city: "Paris", days: 3, units: { temp: "C" } };
    llm.script({
      toolCalls: [{ id: "call_AAAAAAAAAAAAAAAAAAAAAAAA", name: "get_weather", input }, { name: "get_time" }],
    });
    const result = await accumulate(await streamed());
    expect(result.finishReason).toBe("tool_calls");
    expect(result.text).toBe("");
    const [weather, time] = result.tools;
    expect(weather).toMatchObject({ id: "call_AAAAAAAAAAAAAAAAAAAAAAAA", name: "get_weather" });
    expect(JSON.parse(weather!.arguments)).toEqual(input);
    expect(weather!.pieces).toBeGreaterThan(3);
    expect(time!.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(JSON.parse(time!.arguments)).toEqual({});
  });

  it("returns text and tool calls together from a non-streaming create", async () => {
    llm.script({ text: "Checking.", toolCalls: [{ id: "call_1", name: "lookup", input: { q: "x" } }] });
    const { message, finish_reason } = (await client.chat.completions.create({ model, messages: hello })).choices[0]!;
    expect(finish_reason).toBe("tool_calls");
    expect(message.content).toBe("Checking.");
    expect(message.tool_calls).toEqual([
      { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
    ]);
  });

  it("sends rawArguments verbatim, streamed or not", async () => {
    const rawArguments = '{"path": "a.txt", "content": "unterminated';
    llm.script({ toolCalls: [{ name: "write", rawArguments }] }, { toolCalls: [{ name: "write", rawArguments }] });
    const completion = await client.chat.completions.create({ model, messages: hello });
    const call = completion.choices[0]!.message.tool_calls![0]!;
    expect(call.type === "function" && call.function.arguments).toBe(rawArguments);
    expect((await accumulate(await streamed())).tools[0]!.arguments).toBe(rawArguments);
  });

  it.each<[FakeStop, string]>([
    ["end", "stop"],
    ["tool", "tool_calls"],
    ["max_tokens", "length"],
    ["content_filter", "content_filter"],
    ["refusal", "content_filter"],
    ["pause_turn", "stop"],
    ["context_window_exceeded", "length"],
  ])("maps stop %s to finish_reason %s", async (stop, finishReason) => {
    llm.script({ text: "partial", stop }, { text: "partial", stop });
    expect((await client.chat.completions.create({ model, messages: hello })).choices[0]!.finish_reason).toBe(
      finishReason,
    );
    expect((await accumulate(await streamed())).finishReason).toBe(finishReason);
  });

  it("maps usage: cached reads count inside prompt_tokens, and a usage chunk comes only when asked for", async () => {
    const usage = { input: 120, output: 33, cacheRead: 1000, cacheWrite: 50 };
    llm.script({ text: "hi", usage }, { text: "hi", usage }, { text: "hi", usage });
    const expected = {
      prompt_tokens: 1120,
      completion_tokens: 33,
      total_tokens: 1153,
      prompt_tokens_details: { cached_tokens: 1000 },
    };
    expect((await client.chat.completions.create({ model, messages: hello })).usage).toMatchObject(expected);
    expect((await accumulate(await streamed({ stream_options: { include_usage: true } }))).usage).toMatchObject(
      expected,
    );
    expect((await accumulate(await streamed())).usage).toBeUndefined();
  });

  it("estimates usage when none is scripted", async () => {
    llm.script({ text: "an answer of a few words" });
    const usage = (await client.chat.completions.create({ model, messages: hello })).usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(1);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it("delivers streamed chunks incrementally when chunkDelayMs is set", async () => {
    llm.script({ text: "one two three four", chunkDelayMs: 60 });
    const arrivals: number[] = [];
    for await (const chunk of await streamed()) if (chunk.choices[0]?.delta.content) arrivals.push(Date.now());
    expect(arrivals).toHaveLength(4);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(150);
  });
});

describe("errors and retries", () => {
  it("retries a 429 inside the SDK and then succeeds", async () => {
    llm.script({ status: 429 }, { text: "after the rate limit" });
    const completion = await client.chat.completions.create({ model, messages: hello });
    expect(completion.choices[0]!.message.content).toBe("after the rate limit");
    expect(llm.requests.map((r) => r.headers["x-stainless-retry-count"])).toEqual(["0", "1"]);
  });

  it("throws after the SDK's two retries when every answer is a 500", async () => {
    llm.respond = () => ({ status: 500, message: "boom" });
    const error = await client.chat.completions.create({ model, messages: hello }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as APIError).error).toEqual({ message: "boom", type: "server_error", param: null, code: null });
    expect(llm.requests).toHaveLength(3);
  });

  it("fails a stream halfway with a chunk holding only an error object, which the SDK throws as an APIError", async () => {
    llm.script({ text: "one two three four five six", errorAfterChunks: 4 });
    const texts: string[] = [];
    const error = await (async () => {
      for await (const chunk of await client.chat.completions.create({ model, messages: hello, stream: true }))
        texts.push(chunk.choices[0]?.delta.content ?? "");
    })().catch((e: unknown) => e);
    expect(texts.join("").length).toBeGreaterThan(0);
    expect(texts.join("")).not.toBe("one two three four five six");
    expect(error).toMatchObject({ status: undefined, type: "server_error" });
    expect((error as APIError).error).toMatchObject({ type: "server_error", param: null, code: null });
  });

  it("lets an AbortSignal end a hanging request", async () => {
    llm.script({ hang: true }, { text: "still alive" });
    const call = client.chat.completions.create({ model, messages: hello }, { signal: AbortSignal.timeout(100) });
    await expect(call).rejects.toBeInstanceOf(APIUserAbortError);
    expect((await client.chat.completions.create({ model, messages: hello })).choices[0]!.message.content).toBe(
      "still alive",
    );
  });

  it("lets an AbortSignal end a hanging stream, which the SDK ends without an error", async () => {
    llm.script({ hang: true }, { text: "still alive" });
    const controller = new AbortController();
    // The SDK got its 200 and headers, so create() resolves; an abort then (not on a timer, which a loaded machine may fire before the headers) ends iteration quietly.
    const stream = await streamed({}, { signal: controller.signal });
    const reading = accumulate(stream);
    controller.abort();
    const result = await reading;
    expect(controller.signal.aborted).toBe(true);
    expect(result).toMatchObject({ text: "", finishReason: null });
    expect((await client.chat.completions.create({ model, messages: hello })).choices[0]!.message.content).toBe(
      "still alive",
    );
  });
});

const assistantCalling = (...ids: string[]): ChatCompletionMessageParam => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "lookup", arguments: `{"q":"${id}"}` } })),
});
const toolMessage = (id: string): ChatCompletionMessageParam => ({ role: "tool", tool_call_id: id, content: "ok" });
const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: "function",
    function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } },
  },
];

describe("history validation", () => {
  it("accepts a well-formed history with parallel tool calls and consumes the turn", async () => {
    llm.script({ text: "done" });
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: "Be brief." },
      ...hello,
      assistantCalling("call_A", "call_B"),
      toolMessage("call_B"),
      toolMessage("call_A"),
      { role: "assistant", content: "Both looked up." },
      { role: "user", content: "thanks" },
    ];
    const completion = await client.chat.completions.create({ model, messages, tools });
    expect(completion.choices[0]!.message.content).toBe("done");
    expect(llm.pending()).toBe(0);
  });

  const UNANSWERED =
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ";
  const cases: Array<
    [string, Record<string, unknown>, { message: string; param: string | null; code?: string | null }]
  > = [
    ["a missing model", { model: undefined }, { message: "you must provide a model parameter", param: null }],
    [
      "no messages",
      { messages: [] },
      {
        message:
          "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        param: "messages",
        code: "empty_array",
      },
    ],
    [
      "tool calls followed by another role before every answer",
      {
        messages: [
          ...hello,
          assistantCalling("call_A", "call_B"),
          toolMessage("call_A"),
          { role: "user", content: "and?" },
        ],
      },
      { message: `${UNANSWERED}call_B`, param: "messages" },
    ],
    [
      "tool calls as the last message",
      { messages: [...hello, assistantCalling("call_A", "call_B")] },
      { message: `${UNANSWERED}call_A, call_B`, param: "messages" },
    ],
    [
      "a tool message with no tool calls before it",
      { messages: [...hello, { role: "assistant", content: "Hi" }, toolMessage("call_A")] },
      {
        message:
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        param: "messages",
      },
    ],
    [
      "a tool message answering an id that was not called",
      { messages: [...hello, assistantCalling("call_A"), toolMessage("call_Z")] },
      {
        message: "Invalid parameter: 'tool_call_id' of 'call_Z' not found in 'tool_calls' of previous message.",
        param: "messages.[2].tool_call_id",
      },
    ],
    [
      "tool call arguments that are not a string",
      {
        messages: [
          ...hello,
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_A", type: "function", function: { name: "lookup", arguments: { q: 1 } } }],
          },
          toolMessage("call_A"),
        ],
      },
      {
        message:
          "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead.",
        param: "messages[1].tool_calls[0].function.arguments",
        code: "invalid_type",
      },
    ],
    [
      "function parameters that are not an object schema",
      { tools: [{ type: "function", function: { name: "list", parameters: { type: "array" } } }] },
      {
        message: `Invalid schema for function 'list': schema must be a JSON Schema of 'type: "object"', got 'type: "array"'.`,
        param: "tools[0].function.parameters",
        code: "invalid_function_parameters",
      },
    ],
  ];

  it.each(cases)("rejects %s with 400 before consuming a turn", async (_name, override, expected) => {
    llm.script({ text: "must not be used" });
    const params = { model, messages: hello, ...override } as unknown as ChatCompletionCreateParamsNonStreaming;
    const error = await client.chat.completions.create(params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).status).toBe(400);
    expect((error as APIError).error).toEqual({ type: "invalid_request_error", code: null, ...expected });
    expect(llm.pending()).toBe(1);
    expect(llm.requests).toHaveLength(1);
  });
});
