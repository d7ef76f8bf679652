import { describe, expect, test } from "vitest";
import type { NewMessage } from "../../src/core/messages.js";
import { convertToAnthropicMessages } from "../../src/providers/anthropic/convert-to-anthropic-messages.js";
import { convertToOpenAIMessages } from "../../src/providers/openai/convert-to-openai-messages.js";

const image = {
  type: "image" as const,
  attachment_id: "att_1",
  media_type: "image/png" as const,
  bytes: 3,
  width: 1,
  height: 1,
};
const message = (): NewMessage => ({ role: "user", content: [{ type: "text", text: "see" }, image] });
const DATA = new Map([["att_1", "AAEC"]]);

describe("attachments in the providers' requests", () => {
  test("a message's image is converted once: later calls reuse its block, not a new base64 copy", () => {
    const m = message();
    const first = convertToAnthropicMessages([m], DATA)[0]!.content as unknown[];
    const again = convertToAnthropicMessages(
      [m, { role: "assistant", content: [{ type: "text", text: "ok" }] }],
      DATA,
    )[0]!.content as unknown[];
    expect(first[1]).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: "AAEC" } });
    expect(again[1]).toBe(first[1]);
    const openai = convertToOpenAIMessages(null, [m], DATA);
    expect(convertToOpenAIMessages(null, [m], DATA)[0]).toBe(openai[0]);
  });

  test("bytes not loaded: a note in their place, and the conversion is not kept", () => {
    const m = message();
    expect((convertToAnthropicMessages([m])[0]!.content as unknown[])[1]).toEqual({
      type: "text",
      text: "[image att_1 (image/png) not loaded]",
    });
    expect((convertToAnthropicMessages([m], DATA)[0]!.content as unknown[])[1]).toMatchObject({ type: "image" });
    expect(convertToOpenAIMessages(null, [m])[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "see" },
        { type: "text", text: "[image att_1 (image/png) not loaded]" },
      ],
    });
    expect(convertToOpenAIMessages(null, [m], DATA)[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "see" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAEC" } },
      ],
    });
  });
});
