import { describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/core/messages.js";
import { convertToAnthropicMessages } from "../../src/providers/anthropic/convert-to-anthropic-messages.js";
import { toAnthropicToolParams } from "../../src/providers/anthropic/map-anthropic-tool-choice.js";
import { toAnthropicHistory } from "../../src/providers/anthropic/index.js";
import { anthropicStyleHistory, anthropicStyleWire, openaiStyleHistory, toolResult, user } from "./histories.js";

describe("convertToAnthropicMessages", () => {
  it("turns tool calls into tool_use blocks and tool messages into tool_result blocks in one user turn", () => {
    expect(convertToAnthropicMessages(anthropicStyleHistory)).toEqual(anthropicStyleWire);
  });

  it("puts a user message that follows tool results in the same user turn, after the results", () => {
    const history: NewMessage[] = [
      user("time?"),
      { role: "assistant", content: [{ type: "tool_call", id: "toolu_1", name: "get_current_time", input: {} }] },
      toolResult("toolu_1", "get_current_time", "cancelled", true),
      user("Never mind, what is 2+2?"),
    ];
    const converted = convertToAnthropicMessages(history);
    expect(converted.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(converted[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: "cancelled", is_error: true },
      { type: "text", text: "Never mind, what is 2+2?" },
    ]);
  });

  it("keeps tool call ids verbatim and marks error results with is_error", () => {
    const converted = convertToAnthropicMessages(openaiStyleHistory);
    expect(converted[1]!.content).toEqual([{ type: "tool_use", id: "call_abc123", name: "calculate", input: {} }]);
    expect(converted[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "call_abc123", content: "arguments were not valid JSON", is_error: true },
    ]);
  });

  it("makes ids Anthropic rejects valid, the same way on the call and its result", () => {
    const history: NewMessage[] = [
      user("hi"),
      {
        role: "assistant",
        content: [{ type: "tool_call", id: "functions.calculate:0", name: "calculate", input: {} }],
      },
      toolResult("functions.calculate:0", "calculate", "1"),
    ];
    const [, assistant, results] = convertToAnthropicMessages(history);
    expect(assistant!.content).toEqual([
      { type: "tool_use", id: "functions_calculate_0", name: "calculate", input: {} },
    ]);
    expect(results!.content).toEqual([
      { type: "tool_result", tool_use_id: "functions_calculate_0", content: "1", is_error: false },
    ]);
  });

  it("drops empty text blocks and an assistant message left with nothing, so roles still alternate", () => {
    const history: NewMessage[] = [
      user("first"),
      { role: "assistant", content: [{ type: "text", text: "" }] },
      user("second"),
      {
        role: "assistant",
        content: [
          { type: "text", text: "  " },
          { type: "text", text: "answer" },
        ],
      },
    ];
    expect(convertToAnthropicMessages(history)).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "answer" }] },
    ]);
  });

  it("sends an empty tool result without content rather than as an empty string", () => {
    const history: NewMessage[] = [
      user("list"),
      { role: "assistant", content: [{ type: "tool_call", id: "toolu_1", name: "list_files", input: {} }] },
      toolResult("toolu_1", "list_files", ""),
    ];
    expect(convertToAnthropicMessages(history)[2]!.content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", is_error: false },
    ]);
  });
});

describe("toAnthropicHistory", () => {
  it("returns the system prompt apart from the messages, null when there is none", () => {
    expect(toAnthropicHistory("Be brief.", [user("hi")])).toEqual({
      system: "Be brief.",
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    expect(toAnthropicHistory("", [user("hi")]).system).toBeNull();
  });
});

describe("toAnthropicToolParams", () => {
  it("declares the tools named in the history with tool_choice none when a request has no tools", () => {
    const params = toAnthropicToolParams({ tools: [], toolChoice: "auto", messages: anthropicStyleHistory });
    expect(params.tool_choice).toEqual({ type: "none" });
    expect(params.tools?.map((t) => t.name).sort()).toEqual(["calculate", "get_current_time"]);
  });

  it("omits tools and tool_choice when there are no tools and no tool calls in the history", () => {
    expect(toAnthropicToolParams({ tools: [], toolChoice: "required", messages: [user("hi")] })).toEqual({});
  });
});
