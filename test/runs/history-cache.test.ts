import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import type { NewMessage } from "../../src/core/messages.js";
import { convertToAnthropicMessages } from "../../src/providers/anthropic/convert-to-anthropic-messages.js";
import { convertToOpenAIMessages } from "../../src/providers/openai/convert-to-openai-messages.js";
import { createHistoryCache } from "../../src/runs/history-cache.js";

// A full collection on demand, to see what the cache holds beyond what it counts.
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

const BASE64 = "A".repeat(1 << 20);
const attachments = new Map([["att_1", BASE64]]);
const withImage = (): NewMessage[] => [
  { role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image", attachment_id: "att_1", bytes: 786_432, media_type: "image/png", width: 10, height: 10 }] },
  { role: "assistant", content: [{ type: "text", text: "a picture" }] },
];

describe("the history cache", () => {
  it.each([
    // What the provider keeps for the user's message: its converted message (OpenAI), its image block (Anthropic).
    ["OpenAI", (history: NewMessage[]): object => convertToOpenAIMessages(null, history, attachments)[0]!],
    ["Anthropic", (history: NewMessage[]): object => (convertToAnthropicMessages(history, attachments)[0]!.content as object[])[1]!],
  ])("keeps a history whose image a run sent to %s without that image's base64 (its chars count the ids, not the bytes)", async (_name, convert) => {
    const histories = createHistoryCache({ maxChars: 1 << 20 });
    // The run, in a function of its own: its history sent to the model (each message's conversion kept while the message lives), then kept.
    const sent = (() => {
      const history = withImage();
      const request = convert(history);
      histories.keep("conv_1", history, 1);
      return new WeakRef(request);
    })();
    // A macrotask later (a WeakRef keeps its target for the rest of the job that made it), a full collection.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(sent.deref()).toBeUndefined();

    // The next run still gets the history whole from the cache, without a read.
    const next = await histories.load({ messages: { history: () => Promise.reject(new Error("read")) } } as never, "conv_1", 1, { firstSeq: 3, messages: [] });
    expect(next).toEqual(withImage());
  });
});
