import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ModelProvider } from "../../src/core/model-provider.js";
import { ProviderError } from "../../src/core/model-provider.js";
import { createAnthropicProvider } from "../../src/providers/anthropic/index.js";
import { createOpenAIProvider } from "../../src/providers/openai/index.js";
import { type FakeLlm, startFakeLlm } from "../support/fake-llm/server.js";
import { until } from "../support/helpers/lag-event-loop.js";
import { anthropicAgainst, modelRequest, openaiAgainst } from "./fake-llm-providers.js";
import { anthropicStyleHistory, openaiStyleHistory, user } from "./histories.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterEach(() => {
  llm.reset();
  vi.unstubAllEnvs();
});
afterAll(() => llm.close());

/** What every real provider must do, proven through its SDK against the wire-level fake. */
describe.each([
  { name: "anthropic", make: anthropicAgainst, idPrefix: "toolu_" },
  { name: "openai", make: openaiAgainst, idPrefix: "call_" },
])("$name provider", ({ name, make, idPrefix }) => {
  const provider = (opts: { maxRetries?: number } = {}): ModelProvider => make(llm, opts);

  it("streams text deltas that add up to the final text", async () => {
    const text = "Paris is the capital of France, and it is lovely in spring.";
    llm.script({ text });
    const deltas: string[] = [];
    const response = await provider().generate(
      modelRequest([user("Capital of France?")], { onTextDelta: (d) => deltas.push(d) }),
    );
    expect(response.content).toEqual([{ type: "text", text }]);
    expect(response.stopReason).toBe("end_turn");
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join("")).toBe(text);
    expect(llm.requests[0]!.stream).toBe(true);
  });

  it("returns text and tool calls in one message, with ids verbatim and input parsed", async () => {
    llm.script({
      text: "Let me check.",
      toolCalls: [
        { id: `${idPrefix}verbatim01`, name: "get_current_time", input: { timezone: "Asia/Tokyo" } },
        { id: `${idPrefix}verbatim02`, name: "calculate", input: { expression: "12*7", nested: { a: [1, 2] } } },
      ],
    });
    const response = await provider().generate(modelRequest([user("Time in Tokyo and 12*7?")]));
    expect(response.stopReason).toBe("tool_use");
    expect(response.content).toEqual([
      { type: "text", text: "Let me check." },
      { type: "tool_call", id: `${idPrefix}verbatim01`, name: "get_current_time", input: { timezone: "Asia/Tokyo" } },
      {
        type: "tool_call",
        id: `${idPrefix}verbatim02`,
        name: "calculate",
        input: { expression: "12*7", nested: { a: [1, 2] } },
      },
    ]);
  });

  it.each([
    ['{"expression": "(3+4)^2"', "cut-off JSON"],
    ["[1, 2]", "an array"],
    ["compute 2+2", "prose"],
  ])("keeps arguments %j (%s) as raw_arguments with input {}", async (rawArguments) => {
    llm.script({ toolCalls: [{ id: `${idPrefix}raw`, name: "calculate", rawArguments }] });
    const response = await provider().generate(modelRequest([user("2+2?")]));
    expect(response.content).toEqual([
      { type: "tool_call", id: `${idPrefix}raw`, name: "calculate", input: {}, raw_arguments: rawArguments },
    ]);
  });

  it("maps usage, counting cached tokens apart from the uncached input", async () => {
    llm.script({ text: "ok", usage: { input: 100, output: 20, cacheRead: 30, cacheWrite: 7 } });
    const { usage } = await provider().generate(modelRequest([user("hi")]));
    expect(usage).toEqual({
      input_tokens: 100,
      output_tokens: 20,
      cache_read_tokens: 30,
      // Chat Completions reports no cache writes.
      cache_write_tokens: name === "anthropic" ? 7 : 0,
    });
  });

  it("returns the model the API reports", async () => {
    llm.script({ text: "ok", model: "served-model-2" });
    const response = await provider().generate(modelRequest([user("hi")]));
    expect(response.model).toBe("served-model-2");
    expect(llm.requests[0]!.body.model).toBe("test-model");
  });

  it("makes no retry of its own: a 429 is thrown as a retryable ProviderError with the wait it asked for (loopd's loop retries)", async () => {
    llm.script({ status: 429, headers: { "retry-after": "3" } }, { text: "not asked for" });
    const error = await provider()
      .generate(modelRequest([user("hi")]))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, kind: "retryable", retryAfterMs: 3000 });
    expect(llm.requests).toHaveLength(1);
  });

  it("throws a ProviderError with status 500 and the API's message when every attempt fails", async () => {
    llm.respond = () => ({ status: 500, message: "the fake is down" });
    const error = await provider({ maxRetries: 1 })
      .generate(modelRequest([user("hi")]))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 500, message: "the fake is down" });
    expect(llm.requests).toHaveLength(2);
  });

  it("throws a ProviderError with status 400 and the API's message, without retrying", async () => {
    llm.script({ status: 400, message: "messages: bad history" });
    const error = await provider()
      .generate(modelRequest([user("hi")]))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 400, message: "messages: bad history" });
    expect(llm.requests).toHaveLength(1);
  });

  it("throws an AbortError when the signal aborts a request that hangs", async () => {
    llm.script({ hang: true });
    const controller = new AbortController();
    const pending = provider().generate(modelRequest([user("hi")], { signal: controller.signal }));
    // Abort once the fake holds the request: aborted before it arrived, it
    // could arrive after this test and take the next test's scripted turn.
    await until(() => llm.requests.length === 1, { what: "the request reaching the fake" });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("throws an AbortError when the signal aborts mid-stream", async () => {
    llm.script({ text: "one two three four five six seven eight nine ten", chunkDelayMs: 20 });
    const controller = new AbortController();
    const deltas: string[] = [];
    const pending = provider().generate(
      modelRequest([user("count")], {
        signal: controller.signal,
        onTextDelta: (d) => {
          deltas.push(d);
          if (deltas.length === 2) controller.abort();
        },
      }),
    );
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(deltas.length).toBeLessThan(5);
  });

  it.each([
    ["in the text", { text: "one two three four five six", truncateAfterChunks: 3 }],
    [
      "inside a tool call's arguments",
      { toolCalls: [{ name: "calculate", input: { expression: "(3 + 4) ^ 2 * 12 - 7" } }], truncateAfterChunks: 5 },
    ],
  ])("throws a ProviderError when the connection closes %s, before the stream's end", async (_where, turn) => {
    llm.script(turn);
    const error = await provider()
      .generate(modelRequest([user("hi")]))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      status: null,
      message: expect.stringMatching(/stream ended before the answer was complete/),
    });
  });

  it("throws a ProviderError with status null when the server cannot be reached", async () => {
    const closed = await startFakeLlm();
    await closed.close();
    const error = await make(closed, { maxRetries: 0 })
      .generate(modelRequest([user("hi")]))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBeNull();
  });

  it("is built without a key and reports the missing key as a ProviderError on the call", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", undefined);
    vi.stubEnv("ANTHROPIC_AUTH_TOKEN", undefined);
    vi.stubEnv("OPENAI_API_KEY", undefined);
    vi.stubEnv("ANTHROPIC_BASE_URL", llm.url);
    vi.stubEnv("OPENAI_BASE_URL", `${llm.url}/v1`);
    const keyless =
      name === "anthropic" ? createAnthropicProvider({ maxRetries: 0 }) : createOpenAIProvider({ maxRetries: 0 });
    const error = await keyless.generate(modelRequest([user("hi")])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(llm.requests).toHaveLength(0);
  });

  it("reads the API key and base URL from the environment when no client is given", async () => {
    vi.stubEnv(name === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY", "env-key");
    vi.stubEnv("ANTHROPIC_BASE_URL", llm.url);
    vi.stubEnv("OPENAI_BASE_URL", `${llm.url}/v1`);
    llm.script({ text: "from env" });
    const fromEnv = name === "anthropic" ? createAnthropicProvider() : createOpenAIProvider();
    const response = await fromEnv.generate(modelRequest([user("hi")]));
    expect(response.content).toEqual([{ type: "text", text: "from env" }]);
    const { headers } = llm.requests[0]!;
    expect(`${String(headers["authorization"])} ${String(headers["x-api-key"])}`).toContain("env-key");
  });

  it.each([
    ["made by Anthropic", anthropicStyleHistory],
    ["made by OpenAI, with raw arguments and an error result", openaiStyleHistory],
  ])("continues a history %s, which the API accepts", async (_label, history) => {
    llm.script({ text: "continuing" });
    const response = await provider().generate(modelRequest(history));
    expect(response.content).toEqual([{ type: "text", text: "continuing" }]);
  });
});
