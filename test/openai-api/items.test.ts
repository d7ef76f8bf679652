import { describe, expect, test } from "vitest";
import type { Message } from "../../src/core/messages.js";
import { inputOfItems, itemsOfMessages } from "../../src/openai-api/items/index.js";
import { declinedResult } from "../../src/conversations/answer-action.js";

const at = (seq: number, m: Omit<Message, "id" | "seq" | "run_id" | "created_at">): Message =>
  ({ ...m, id: `m${seq}`, seq, run_id: "run_1", created_at: "2026-01-01T00:00:00.000Z" }) as Message;

const history: Message[] = [
  at(1, { role: "user", content: [{ type: "text", text: "weather?" }] }),
  at(2, {
    role: "assistant",
    content: [
      { type: "text", text: "Let me look." },
      { type: "tool_call", id: "call_a", name: "get_current_time", input: { timezone: "UTC" } },
      { type: "tool_call", id: "call_b", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_call", id: "call_c", name: "delete_file", input: { path: "x" } },
    ],
  }),
  at(3, {
    role: "tool",
    content: [
      { type: "tool_result", tool_call_id: "call_a", name: "get_current_time", content: "12:00", is_error: false },
    ],
  }),
];

describe("loopd messages as OpenAI items", () => {
  test("a response's output: text, a server tool as mcp_call, a client tool as function_call, an approval as mcp_approval_request", () => {
    const items = itemsOfMessages(history, {
      clientTools: new Set(["get_weather"]),
      pending: [
        { tool_call_id: "call_b", name: "get_weather", input: {}, action: "submit_output" },
        { tool_call_id: "call_c", name: "delete_file", input: {}, action: "approve" },
      ],
      include: "output",
    });
    expect(items.map((i) => i.type)).toEqual(["message", "mcp_call", "function_call", "mcp_approval_request"]);
    expect(items[1]).toMatchObject({ server_label: "loopd", name: "get_current_time", output: "12:00", error: null });
    expect(items[2]).toMatchObject({ call_id: "call_b", arguments: '{"city":"Paris"}' });
    expect(items[3]).toMatchObject({ id: "mcpr_call_c", name: "delete_file" });
  });

  test("a conversation's items include the user's message, the client's outputs and denials", () => {
    const answered = [
      ...history,
      at(4, {
        role: "tool",
        content: [
          { type: "tool_result", tool_call_id: "call_b", name: "get_weather", content: "sunny", is_error: false },
        ],
      }),
      at(5, {
        role: "tool",
        content: [
          {
            type: "tool_result",
            tool_call_id: "call_c",
            name: "delete_file",
            content: declinedResult("no"),
            is_error: true,
          },
        ],
      }),
    ];
    const items = itemsOfMessages(answered, { clientTools: new Set(["get_weather"]), include: "all" });
    expect(items.map((i) => i.type)).toEqual([
      "message",
      "message",
      "mcp_call",
      "function_call",
      "mcp_call",
      "function_call_output",
      "mcp_approval_response",
    ]);
    expect(items.at(-1)).toMatchObject({ approval_request_id: "mcpr_call_c", approve: false, reason: "no" });
  });

  test("a finish call is the answer's text: its result as JSON", () => {
    const items = itemsOfMessages(
      [
        at(1, {
          role: "assistant",
          content: [{ type: "tool_call", id: "f", name: "finish", input: { summary: "s", result: { a: 1 } } }],
        }),
      ],
      { clientTools: new Set(), include: "output" },
    );
    expect(items).toEqual([
      expect.objectContaining({ type: "message", content: [expect.objectContaining({ text: '{"a":1}' })] }),
    ]);
  });
});

describe("input items as loopd's words", () => {
  test("a string is a user message; outputs, approvals and instructions are sorted out", () => {
    expect(inputOfItems("hi").content).toEqual([{ type: "text", text: "hi" }]);
    const input = inputOfItems([
      { role: "developer", content: "be brief" },
      { type: "function_call_output", call_id: "call_b", output: "sunny" },
      { type: "mcp_approval_response", approval_request_id: "mcpr_call_c", approve: true },
      { role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,AAAA" }] },
    ]);
    expect(input.instructions).toEqual(["be brief"]);
    expect(input.toolOutputs).toEqual([{ tool_call_id: "call_b", output: "sunny", is_error: false }]);
    expect(input.approvals).toEqual([{ tool_call_id: "call_c", approve: true, reason: undefined }]);
    expect(input.content).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
    ]);
  });

  test("with an assistant message, a call or reasoning, the items before the last user messages are a history", () => {
    const input = inputOfItems([
      { role: "user", content: "Hi" },
      { type: "reasoning" },
      { role: "system", content: "be brief" },
      { role: "assistant", content: [{ type: "output_text", text: "Hello." }] },
      { type: "function_call", call_id: "call_a", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "call_a", output: "ok" },
      { role: "user", content: "And?" },
      { role: "user", content: "Well?" },
    ]);
    expect(input.history?.params).toEqual(["input[0]", "input[3]", "input[4]", "input[5]"]);
    expect(input.history?.items.map((item) => item.type ?? "message")).toEqual([
      "message",
      "message",
      "function_call",
      "function_call_output",
    ]);
    expect(input.content).toEqual([
      { type: "text", text: "And?" },
      { type: "text", text: "Well?" },
    ]);
    expect(input.instructions).toEqual(["be brief"]);
    expect(input.toolOutputs).toEqual([]);
    expect(inputOfItems([{ role: "user", content: "Hi" }]).history).toBeNull();
  });

  test("an unknown approval id, or an item reference, is a 400 naming the item", () => {
    expect(() => inputOfItems([{ type: "item_reference", id: "msg_1" }])).toThrow(/input\[0\]\.type/);
    expect(() => inputOfItems([{ type: "mcp_approval_response", approval_request_id: "x", approve: true }])).toThrow(
      /input\[0\]\.approval_request_id/,
    );
  });
});
