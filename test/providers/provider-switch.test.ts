import { describe, expect, it } from "vitest";
import { convertToAnthropicMessages } from "../../src/providers/anthropic/convert-to-anthropic-messages.js";
import { convertToOpenAIMessages } from "../../src/providers/openai/convert-to-openai-messages.js";
import { anthropicStyleHistory, openaiStyleHistory } from "./histories.js";

/**
 * A conversation can change provider between runs: the history one provider
 * made must replay to the other with every call still paired to its result.
 */
describe("switching provider mid-conversation", () => {
  it("replays a history made by Anthropic to OpenAI with toolu_ ids paired to their tool messages", () => {
    const messages = convertToOpenAIMessages(null, anthropicStyleHistory);
    const callIds = messages.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []));
    const resultIds = messages.flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : []));
    expect(callIds).toEqual(["toolu_01A", "toolu_01B"]);
    expect(resultIds).toEqual(callIds);
  });

  it("replays a history made by OpenAI to Anthropic with call_ ids paired and results right after their calls", () => {
    const messages = convertToAnthropicMessages(openaiStyleHistory);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    for (let i = 1; i < messages.length; i += 2) {
      const content = messages[i]!.content;
      const next = messages[i + 1]!.content;
      if (typeof content === "string" || typeof next === "string") throw new Error("expected blocks");
      const uses = content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
      const results = next.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : []));
      expect(results).toEqual(uses);
    }
    expect(JSON.stringify(messages)).toContain('"call_abc123"');
    expect(JSON.stringify(messages)).toContain('"call_def456"');
  });
});
