import { describe, expect, test } from "vitest";
import {
  anthropicImageTokens,
  estimateAttachmentTokens,
  openAIImageTokens,
} from "../../src/agent/estimate-image-tokens.js";
import { estimateMessageTokens } from "../../src/agent/estimate-tokens.js";

describe("image token estimates", () => {
  test("Anthropic: width × height / 750, after scaling the long side to 1568", () => {
    expect(anthropicImageTokens({ width: 64, height: 64 })).toBe(6);
    expect(anthropicImageTokens({ width: 1000, height: 1000 })).toBe(1334);
    expect(anthropicImageTokens({ width: 3136, height: 1568 })).toBe(Math.ceil((1568 * 784) / 750));
  });

  test("OpenAI: 85 + 170 per 512-px tile, fitted into 2048×2048 then its shortest side to 768 (OpenAI's own examples)", () => {
    expect(openAIImageTokens({ width: 1024, height: 1024 })).toBe(765);
    expect(openAIImageTokens({ width: 2048, height: 4096 })).toBe(1105);
    expect(openAIImageTokens({ width: 64, height: 64 })).toBe(255);
  });

  test("a message counts its images by the dearer rule, its documents by their size", () => {
    const image = {
      type: "image" as const,
      attachment_id: "att_1",
      media_type: "image/png" as const,
      bytes: 100,
      width: 1024,
      height: 1024,
    };
    expect(estimateAttachmentTokens(image)).toBe(Math.max(765, anthropicImageTokens(image)));
    const withImage = estimateMessageTokens({ role: "user", content: [{ type: "text", text: "hi" }, image] });
    const without = estimateMessageTokens({ role: "user", content: [{ type: "text", text: "hi" }] });
    expect(withImage - without).toBeGreaterThanOrEqual(1398);
    expect(
      estimateAttachmentTokens({ type: "document", attachment_id: "att_2", media_type: "text/plain", bytes: 4000 }),
    ).toBe(1000);
  });
});
