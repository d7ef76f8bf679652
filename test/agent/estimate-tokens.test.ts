import { countTokens } from "gpt-tokenizer";
import { describe, expect, test } from "vitest";
import { calibrateTokens, estimateMessageTokens, estimateTextTokens } from "../../src/agent/estimate-tokens.js";
import type { NewMessage } from "../../src/core/messages.js";
import { toolResults } from "../support/helpers/tool-heavy-conversation.js";

const PROSE =
  "Could you look through the billing module and tell me why the invoice totals are off by a cent for some customers? I think it started after last week's change to rounding, but I am not sure which file holds it.";

describe("local token estimates", () => {
  test("within 15% of a real tokenizer (o200k) on a tool-heavy conversation, and within 20% on each result", () => {
    const results = toolResults(60, { seed: 7 });
    let estimated = estimateTextTokens(PROSE);
    let real = countTokens(PROSE);
    for (const { content } of results) {
      const e = estimateTextTokens(content);
      const r = countTokens(content);
      expect(Math.abs(e - r) / r).toBeLessThan(0.2);
      estimated += e;
      real += r;
    }
    expect(Math.abs(estimated - real) / real).toBeLessThan(0.15);
  });

  test.each([
    { kind: "English prose", text: PROSE.repeat(5) },
    { kind: "numbers", text: Array.from({ length: 300 }, (_, i) => String((i * 7919) % 100_000)).join(", ") },
    { kind: "Chinese", text: "你好，世界。这是一个测试。我们正在估计令牌的数量。".repeat(20) },
    { kind: "hex ids", text: Array.from({ length: 100 }, (_, i) => `run_${(i * 2654435761).toString(16)}`).join(" ") },
  ])("within 25% on $kind", ({ text }) => {
    const real = countTokens(text);
    expect(Math.abs(estimateTextTokens(text) - real) / real).toBeLessThan(0.25);
  });

  test("a message's estimate counts its text, calls and results, once per message", () => {
    const message: NewMessage = {
      role: "tool",
      content: [{ type: "tool_result", tool_call_id: "toolu_1", name: "read_file", content: PROSE, is_error: false }],
    };
    const first = estimateMessageTokens(message);
    expect(first).toBeGreaterThan(estimateTextTokens(PROSE));
    expect(estimateMessageTokens(message)).toBe(first);
  });

  test("calibration: the provider's count over the estimate, rounded to a twentieth and kept within [0.5, 3]", () => {
    expect(calibrateTokens({ reported: 1180, estimated: 1000 })).toBe(1.2);
    expect(calibrateTokens({ reported: 1000, estimated: 1000 })).toBe(1);
    expect(calibrateTokens({ reported: 10_000, estimated: 1000 })).toBe(3);
    expect(calibrateTokens({ reported: 1, estimated: 1000 })).toBe(0.5);
    expect(calibrateTokens({ reported: 0, estimated: 1000 })).toBe(1);
    // A tokenizer that counts 20% more (Claude's, next to o200k) is learnt from one call and then predicted within 5%.
    const texts = toolResults(8, { seed: 3 }).map((r) => r.content);
    const claude = (t: string) => Math.round(countTokens(t) * 1.2);
    const ratio = calibrateTokens({ reported: claude(texts[0]!), estimated: estimateTextTokens(texts[0]!) });
    const next = texts.slice(1).join("\n");
    expect(Math.abs(estimateTextTokens(next) * ratio - claude(next)) / claude(next)).toBeLessThan(0.15);
  });
});
