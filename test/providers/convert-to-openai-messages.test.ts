import { describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/core/messages.js";
import { convertToOpenAIMessages } from "../../src/providers/openai/convert-to-openai-messages.js";
import { toOpenAIHistory } from "../../src/providers/openai/index.js";
import { anthropicStyleHistory, openaiStyleHistory, user } from "./histories.js";

describe("convertToOpenAIMessages", () => {
  it("puts the system prompt first and text and tool calls of one assistant message together", () => {
    expect(convertToOpenAIMessages("Be brief.", anthropicStyleHistory)).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "What time is it in Tokyo, and what is 12*7?" },
      {
        role: "assistant",
        content: "Let me check both.",
        tool_calls: [
          {
            id: "toolu_01A",
            type: "function",
            function: { name: "get_current_time", arguments: '{"timezone":"Asia/Tokyo"}' },
          },
          { id: "toolu_01B", type: "function", function: { name: "calculate", arguments: '{"expression":"12*7"}' } },
        ],
      },
      { role: "tool", tool_call_id: "toolu_01A", content: '{"timezone":"Asia/Tokyo","time":"14:05"}' },
      { role: "tool", tool_call_id: "toolu_01B", content: "84" },
      { role: "assistant", content: "It is 14:05 in Tokyo and 12*7 = 84." },
      { role: "user", content: "Thanks! And in Paris?" },
    ]);
  });

  it("replays raw_arguments exactly as the model sent them, with content null for a tool-only message", () => {
    const converted = convertToOpenAIMessages(null, openaiStyleHistory);
    expect(converted[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_abc123", type: "function", function: { name: "calculate", arguments: '{"expression": "(3+4)^2"' } },
      ],
    });
  });

  it("prefixes a failed tool's content with Error: unless it already says so", () => {
    const converted = convertToOpenAIMessages(null, [
      ...openaiStyleHistory.slice(0, 2),
      {
        role: "tool",
        content: [
          {
            type: "tool_result",
            tool_call_id: "call_abc123",
            name: "calculate",
            content: "error: division by zero",
            is_error: true,
          },
        ],
      },
    ]);
    expect(convertToOpenAIMessages(null, openaiStyleHistory)[2]).toEqual({
      role: "tool",
      tool_call_id: "call_abc123",
      content: "Error: arguments were not valid JSON",
    });
    expect(converted[2]).toEqual({ role: "tool", tool_call_id: "call_abc123", content: "error: division by zero" });
  });

  it("omits the system message when there is no system prompt and drops empty assistant messages", () => {
    const history: NewMessage[] = [user("hi"), { role: "assistant", content: [] }, user("again")];
    expect(convertToOpenAIMessages(null, history)).toEqual([
      { role: "user", content: "hi" },
      { role: "user", content: "again" },
    ]);
    expect(convertToOpenAIMessages("", [user("hi")])).toEqual([{ role: "user", content: "hi" }]);
  });

  it("keeps several user text blocks apart as text parts", () => {
    const history: NewMessage[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
      },
    ];
    expect(convertToOpenAIMessages(null, history)).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
      },
    ]);
  });
});

describe("toOpenAIHistory", () => {
  it("returns the messages with the system prompt as the first message", () => {
    expect(toOpenAIHistory("sys", [user("hi")])).toEqual({
      messages: [
        { role: "system", content: "sys" },
        { role: "user", content: "hi" },
      ],
    });
  });
});
