import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { ProviderError } from "../../src/core/model-provider.js";
import { accumulateAnthropicStream } from "../../src/providers/anthropic/accumulate-anthropic-stream.js";

/** Event shapes the fake server does not send; cast because only the fields read here matter. */
async function* events(...list: unknown[]): AsyncGenerator<Anthropic.RawMessageStreamEvent> {
  for (const event of list) yield event as Anthropic.RawMessageStreamEvent;
}

const start = {
  type: "message_start",
  message: {
    model: "claude-test",
    usage: { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: null, cache_creation_input_tokens: null },
  },
};
const stop = [
  { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { input_tokens: null, output_tokens: 9 } },
  { type: "message_stop" },
];

describe("accumulateAnthropicStream", () => {
  it("fails with a ProviderError when the stream ends before the message is complete", async () => {
    const cut = events(start, { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    await expect(accumulateAnthropicStream(cut)).rejects.toBeInstanceOf(ProviderError);
  });

  it("skips blocks loopd does not keep and takes a tool input that came whole in content_block_start", async () => {
    const message = await accumulateAnthropicStream(
      events(
        start,
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } },
        {
          type: "content_block_start",
          index: 1,
          content_block: { type: "tool_use", id: "toolu_1", name: "calculate", input: { expression: "1+1" } },
        },
        { type: "content_block_stop", index: 1 },
        ...stop,
      ),
    );
    expect(message.content).toEqual([
      { type: "tool_call", id: "toolu_1", name: "calculate", input: { expression: "1+1" } },
    ]);
    expect(message.usage).toEqual({ input_tokens: 10, output_tokens: 9, cache_read_tokens: 0, cache_write_tokens: 0 });
    expect(message.rawStopReason).toBe("tool_use");
  });
});
