import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ModelStopReason, ToolChoice } from "../../src/core/model-provider.js";
import { type FakeLlm, type FakeStop, startFakeLlm } from "../support/fake-llm/server.js";
import { modelRequest, openaiAgainst, tools } from "./fake-llm-providers.js";
import { openaiStyleHistory, user } from "./histories.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterEach(() => llm.reset());
afterAll(() => llm.close());

describe("OpenAI provider on the wire", () => {
  it.each<[FakeStop, string, ModelStopReason]>([
    ["end", "stop", "end_turn"],
    ["tool", "tool_calls", "tool_use"],
    ["max_tokens", "length", "max_tokens"],
    ["content_filter", "content_filter", "content_filter"],
  ])("maps a %s stop (%s) to %s", async (stop, raw, expected) => {
    llm.script({
      text: "partial",
      ...(stop === "tool" ? { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] } : {}),
      stop,
    });
    const response = await openaiAgainst(llm).generate(modelRequest([user("hi")]));
    expect(response.stopReason).toBe(expected);
    expect(response.rawStopReason).toBe(raw);
  });

  it("treats tool calls that finish with stop as tool use, as some compatible servers send", async () => {
    llm.script({ toolCalls: [{ id: "call_1", name: "calculate", input: { expression: "1+1" } }], stop: "end" });
    const response = await openaiAgainst(llm).generate(modelRequest([user("1+1?")]));
    expect(response.rawStopReason).toBe("stop");
    expect(response.stopReason).toBe("tool_use");
  });

  it.each<[ToolChoice, unknown]>([
    ["auto", "auto"],
    ["none", "none"],
    ["required", "required"],
    [{ name: "calculate" }, { type: "function", function: { name: "calculate" } }],
  ])("sends tool choice %j as %j", async (toolChoice, expected) => {
    llm.script({ text: "ok" });
    await openaiAgainst(llm).generate(modelRequest([user("hi")], { toolChoice }));
    expect(llm.requests[0]!.body.tool_choice).toEqual(expected);
  });

  it("sends function tools, max_completion_tokens and asks for usage in the stream", async () => {
    llm.script({ text: "ok" });
    await openaiAgainst(llm).generate(modelRequest([user("hi")], { maxTokens: 300 }));
    const { body } = llm.requests[0]!;
    expect(body).toMatchObject({
      model: "test-model",
      max_completion_tokens: 300,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(body.tools).toEqual(
      tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.inputSchema },
      })),
    );
  });

  it("leaves out tools and tool_choice when there are none", async () => {
    llm.script({ text: "ok" });
    await openaiAgainst(llm).generate(modelRequest([user("hi")], { tools: [], toolChoice: "required" }));
    const { body } = llm.requests[0]!;
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
  });

  it("sends a multi-step history with the system prompt first, replayed arguments and flagged errors", async () => {
    llm.script({ text: "(3+4)^2 = 49" });
    await openaiAgainst(llm).generate(modelRequest(openaiStyleHistory, { system: "Be brief." }));
    expect(llm.requests[0]!.body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is (3+4)^2?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_abc123",
            type: "function",
            function: { name: "calculate", arguments: '{"expression": "(3+4)^2"' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_abc123", content: "Error: arguments were not valid JSON" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_def456",
            type: "function",
            function: { name: "calculate", arguments: '{"expression":"(3+4)^2"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_def456", content: "49" },
    ]);
  });
});
