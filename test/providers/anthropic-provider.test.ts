import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ModelStopReason, ToolChoice } from "../../src/core/model-provider.js";
import { type FakeLlm, type FakeStop, startFakeLlm } from "../support/fake-llm/server.js";
import { anthropicAgainst, modelRequest, tools } from "./fake-llm-providers.js";
import { anthropicStyleHistory, anthropicStyleWire, toolResult, user } from "./histories.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterEach(() => llm.reset());
afterAll(() => llm.close());

describe("Anthropic provider on the wire", () => {
  it.each<[FakeStop, string, ModelStopReason]>([
    ["end", "end_turn", "end_turn"],
    ["tool", "tool_use", "tool_use"],
    ["max_tokens", "max_tokens", "max_tokens"],
    ["refusal", "refusal", "refusal"],
    ["pause_turn", "pause_turn", "pause_turn"],
    ["context_window_exceeded", "model_context_window_exceeded", "context_window_exceeded"],
  ])("maps a %s stop (%s) to %s", async (stop, raw, expected) => {
    llm.script({
      text: "partial",
      ...(stop === "tool" ? { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] } : {}),
      stop,
    });
    const response = await anthropicAgainst(llm).generate(modelRequest([user("hi")]));
    expect(response.stopReason).toBe(expected);
    expect(response.rawStopReason).toBe(raw);
  });

  it.each<[ToolChoice, unknown]>([
    ["auto", { type: "auto" }],
    ["none", { type: "none" }],
    ["required", { type: "any" }],
    [{ name: "calculate" }, { type: "tool", name: "calculate" }],
  ])("sends tool choice %j as %j", async (toolChoice, expected) => {
    llm.script({ text: "ok" });
    await anthropicAgainst(llm).generate(modelRequest([user("hi")], { toolChoice }));
    expect(llm.requests[0]!.body.tool_choice).toEqual(expected);
  });

  it("sends the system prompt, the tools, max_tokens and a streaming flag", async () => {
    llm.script({ text: "ok" });
    await anthropicAgainst(llm).generate(modelRequest([user("hi")], { system: "Be brief.", maxTokens: 300 }));
    const { body } = llm.requests[0]!;
    expect(body).toMatchObject({ model: "test-model", system: "Be brief.", max_tokens: 300, stream: true });
    expect(body.tools).toEqual(
      tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema })),
    );
  });

  it("shares the tools between requests without carrying one request's cache breakpoint into another", async () => {
    const provider = anthropicAgainst(llm);
    for (const cacheKey of [undefined, "conv_1", undefined, "conv_1"]) {
      llm.script({ text: "ok" });
      await provider.generate(modelRequest([user("hi")], cacheKey ? { cacheKey } : {}));
    }
    const lastTools = llm.requests.map((r) =>
      (r.body.tools as Array<Record<string, unknown>>).map((t) => t.cache_control ?? null),
    );
    const breakpoint = [...tools.map(() => null).slice(1), { type: "ephemeral" }];
    expect(lastTools).toEqual([tools.map(() => null), breakpoint, tools.map(() => null), breakpoint]);
    // Built once per tools array: the same objects each time (the trace's hash keeps their text).
    const built = ["a", "b"].map(
      () => (provider.buildRequest(modelRequest([user("hi")], { cacheKey: "conv_1" })) as { tools?: unknown }).tools,
    );
    expect(built[0]).toBe(built[1]);
  });

  it("leaves out system, tools and tool_choice when there are none", async () => {
    llm.script({ text: "ok" });
    await anthropicAgainst(llm).generate(modelRequest([user("hi")], { tools: [], toolChoice: "required" }));
    const { body } = llm.requests[0]!;
    expect(Object.keys(body).sort()).toEqual(["max_tokens", "messages", "model", "stream"]);
  });

  it("sends a multi-step history as alternating turns with the tool results grouped", async () => {
    llm.script({ text: "In Paris it is 07:05." });
    const history = [
      ...anthropicStyleHistory,
      {
        role: "assistant" as const,
        content: [
          {
            type: "tool_call" as const,
            id: "toolu_01C",
            name: "get_current_time",
            input: { timezone: "Europe/Paris" },
          },
        ],
      },
      toolResult("toolu_01C", "get_current_time", '{"time":"07:05"}'),
    ];
    const response = await anthropicAgainst(llm).generate(modelRequest(history));
    expect(response.content).toEqual([{ type: "text", text: "In Paris it is 07:05." }]);
    expect(llm.requests[0]!.body.messages).toEqual([
      ...anthropicStyleWire,
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_01C", name: "get_current_time", input: { timezone: "Europe/Paris" } }],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_01C", content: '{"time":"07:05"}', is_error: false }],
      },
    ]);
  });

  it("continues a history with tool calls after its tools were removed", async () => {
    llm.script({ text: "fine" });
    await anthropicAgainst(llm).generate(modelRequest(anthropicStyleHistory, { tools: [] }));
    const { body } = llm.requests[0]!;
    expect(body.tool_choice).toEqual({ type: "none" });
    expect(body.tools.map((t: { name: string }) => t.name).sort()).toEqual(["calculate", "get_current_time"]);
  });
});
