import { describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/core/messages.js";
import { convertToAnthropicMessages } from "../../src/providers/anthropic/convert-to-anthropic-messages.js";
import { convertToOpenAIMessages } from "../../src/providers/openai/convert-to-openai-messages.js";
import { createHistoryCache } from "../../src/runs/history-cache.js";
import { collected } from "../support/helpers/collect-garbage.js";

const BASE64 = "A".repeat(1 << 20);
const attachments = new Map([["att_1", BASE64]]);
const image = {
  type: "image",
  attachment_id: "att_1",
  bytes: 786_432,
  media_type: "image/png",
  width: 10,
  height: 10,
} as const;
const withImage = (): NewMessage[] => [
  { role: "user", content: [{ type: "text", text: "what is this?" }, image] },
  { role: "assistant", content: [{ type: "tool_call", id: "call_1", name: "look", input: {} }] },
  // A tool's image (an MCP tool's): Anthropic is sent it as base64 in the tool's result.
  {
    role: "tool",
    content: [
      {
        type: "tool_result",
        tool_call_id: "call_1",
        name: "look",
        content: "a picture",
        is_error: false,
        images: [image],
      },
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "a picture" }] },
];

describe("the history cache", () => {
  it.each([
    // What the provider keeps of a message that holds an image: the user's converted message (OpenAI), the user's image block, and the tool's result block (Anthropic).
    [
      "OpenAI, a user's image",
      (history: NewMessage[]): object => convertToOpenAIMessages(null, history, attachments)[0]!,
    ],
    [
      "Anthropic, a user's image",
      (history: NewMessage[]): object => (convertToAnthropicMessages(history, attachments)[0]!.content as object[])[1]!,
    ],
    [
      "Anthropic, a tool's image",
      (history: NewMessage[]): object => (convertToAnthropicMessages(history, attachments)[2]!.content as object[])[0]!,
    ],
  ])(
    "keeps a history whose image a run sent (%s) without that image's base64 (its chars count the ids, not the bytes)",
    async (_name, convert) => {
      const histories = createHistoryCache({ maxChars: 1 << 20 });
      // The run, in a function of its own: its history sent to the model (each message's conversion kept while the message lives), then kept.
      const sent = (() => {
        const history = withImage();
        const request = convert(history);
        histories.keep("conv_1", history, 1);
        return new WeakRef(request);
      })();
      expect(await collected(sent)).toBe(true);

      // The next run still gets the history whole from the cache, without a read.
      const next = await histories.load(
        { messages: { history: () => Promise.reject(new Error("read")) } } as never,
        "conv_1",
        1,
        { firstSeq: 5, messages: [] },
      );
      expect(next).toEqual(withImage());
    },
  );
});
