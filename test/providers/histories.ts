import type { NewMessage } from "../../src/core/messages.js";

/** Canonical histories shared by the provider tests. */

export const user = (text: string): NewMessage => ({ role: "user", content: [{ type: "text", text }] });

export const toolResult = (tool_call_id: string, name: string, content: string, is_error = false): NewMessage => ({
  role: "tool",
  content: [{ type: "tool_result", tool_call_id, name, content, is_error }],
});

/** Two parallel tool calls made by Claude, answered, then a follow-up question. */
export const anthropicStyleHistory: NewMessage[] = [
  user("What time is it in Tokyo, and what is 12*7?"),
  {
    role: "assistant",
    content: [
      { type: "text", text: "Let me check both." },
      { type: "tool_call", id: "toolu_01A", name: "get_current_time", input: { timezone: "Asia/Tokyo" } },
      { type: "tool_call", id: "toolu_01B", name: "calculate", input: { expression: "12*7" } },
    ],
  },
  toolResult("toolu_01A", "get_current_time", '{"timezone":"Asia/Tokyo","time":"14:05"}'),
  toolResult("toolu_01B", "calculate", "84"),
  { role: "assistant", content: [{ type: "text", text: "It is 14:05 in Tokyo and 12*7 = 84." }] },
  user("Thanks! And in Paris?"),
];

/** An OpenAI-made call whose arguments were not JSON, answered with an error. */
export const openaiStyleHistory: NewMessage[] = [
  user("What is (3+4)^2?"),
  {
    role: "assistant",
    content: [
      { type: "tool_call", id: "call_abc123", name: "calculate", input: {}, raw_arguments: '{"expression": "(3+4)^2"' },
    ],
  },
  toolResult("call_abc123", "calculate", "arguments were not valid JSON", true),
  {
    role: "assistant",
    content: [{ type: "tool_call", id: "call_def456", name: "calculate", input: { expression: "(3+4)^2" } }],
  },
  toolResult("call_def456", "calculate", "49"),
];

/** `anthropicStyleHistory` as the Anthropic Messages API takes it. */
export const anthropicStyleWire = [
  { role: "user", content: [{ type: "text", text: "What time is it in Tokyo, and what is 12*7?" }] },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Let me check both." },
      { type: "tool_use", id: "toolu_01A", name: "get_current_time", input: { timezone: "Asia/Tokyo" } },
      { type: "tool_use", id: "toolu_01B", name: "calculate", input: { expression: "12*7" } },
    ],
  },
  {
    role: "user",
    content: [
      {
        type: "tool_result",
        tool_use_id: "toolu_01A",
        content: '{"timezone":"Asia/Tokyo","time":"14:05"}',
        is_error: false,
      },
      { type: "tool_result", tool_use_id: "toolu_01B", content: "84", is_error: false },
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "It is 14:05 in Tokyo and 12*7 = 84." }] },
  { role: "user", content: [{ type: "text", text: "Thanks! And in Paris?" }] },
];
