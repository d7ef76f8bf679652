import { describe, expect, it } from "vitest";
import { mapAnthropicStopReason } from "../../src/providers/anthropic/map-anthropic-stop-reason.js";
import { mapAnthropicToolChoice } from "../../src/providers/anthropic/map-anthropic-tool-choice.js";
import { mapOpenAIStopReason } from "../../src/providers/openai/map-openai-stop-reason.js";
import { mapOpenAIToolChoice, toOpenAIToolParams } from "../../src/providers/openai/map-openai-tool-choice.js";

describe("mapAnthropicStopReason", () => {
  it.each([
    ["end_turn", "end_turn"],
    ["stop_sequence", "end_turn"],
    ["tool_use", "tool_use"],
    ["max_tokens", "max_tokens"],
    ["refusal", "refusal"],
    ["pause_turn", "pause_turn"],
    ["model_context_window_exceeded", "context_window_exceeded"],
    ["something_new", "end_turn"],
    [null, "end_turn"],
  ])("maps %s to %s", (raw, expected) => {
    expect(mapAnthropicStopReason(raw)).toBe(expected);
  });
});

describe("mapOpenAIStopReason", () => {
  it.each([
    ["stop", false, "end_turn"],
    ["tool_calls", true, "tool_use"],
    ["function_call", true, "tool_use"],
    ["length", false, "max_tokens"],
    ["content_filter", false, "content_filter"],
    ["stop", true, "tool_use"],
    [null, true, "tool_use"],
    [null, false, "end_turn"],
  ] as const)("maps %s (tool calls: %s) to %s", (raw, hasToolCalls, expected) => {
    expect(mapOpenAIStopReason(raw, { hasToolCalls })).toBe(expected);
  });
});

describe("tool choice", () => {
  it("maps to Anthropic's auto, none, any and tool", () => {
    expect(mapAnthropicToolChoice("auto")).toEqual({ type: "auto" });
    expect(mapAnthropicToolChoice("none")).toEqual({ type: "none" });
    expect(mapAnthropicToolChoice("required")).toEqual({ type: "any" });
    expect(mapAnthropicToolChoice({ name: "calculate" })).toEqual({ type: "tool", name: "calculate" });
  });

  it("maps to OpenAI's auto, none, required and a named function", () => {
    expect(mapOpenAIToolChoice("auto")).toBe("auto");
    expect(mapOpenAIToolChoice("none")).toBe("none");
    expect(mapOpenAIToolChoice("required")).toBe("required");
    expect(mapOpenAIToolChoice({ name: "calculate" })).toEqual({ type: "function", function: { name: "calculate" } });
  });

  it("omits OpenAI tools and tool_choice when there are no tools", () => {
    expect(toOpenAIToolParams({ tools: [], toolChoice: "required" })).toEqual({});
  });
});
