import { describe, expect, test } from "vitest";
import type { ToolSpec } from "../../../src/core/model-provider.js";
import { planMockReply } from "../../../src/providers/mock/plan-mock-reply.js";

const user = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }] });
const weather: ToolSpec = {
  name: "get_weather",
  description: "The weather",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer" } },
    required: ["city", "days"],
  },
  client: true,
};
const calculate: ToolSpec = { name: "calculate", description: "Arithmetic", inputSchema: { type: "object" } };

describe("the mock offered a client's function tools", () => {
  test("a question calls the first client tool, its required fields filled", () => {
    const reply = planMockReply({
      messages: [user("Weather in Paris?")],
      tools: [calculate, weather],
      toolChoice: "auto",
    });
    expect(reply.stopReason).toBe("tool_use");
    expect(reply.content).toEqual([
      { type: "tool_call", id: "mock_call_1", name: "get_weather", input: { city: "Weather in Paris?", days: 1 } },
    ]);
  });

  test("not a question, tool_choice none, or only server tools: a text answer", () => {
    expect(planMockReply({ messages: [user("Hello.")], tools: [weather], toolChoice: "auto" }).stopReason).toBe(
      "end_turn",
    );
    expect(planMockReply({ messages: [user("Hi?")], tools: [weather], toolChoice: "none" }).stopReason).toBe(
      "end_turn",
    );
    expect(planMockReply({ messages: [user("Hi?")], tools: [calculate], toolChoice: "auto" }).stopReason).toBe(
      "end_turn",
    );
  });
});
