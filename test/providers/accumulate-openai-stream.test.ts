import type OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { ProviderError } from "../../src/core/model-provider.js";
import { accumulateOpenAIStream } from "../../src/providers/openai/accumulate-openai-stream.js";

/** Chunk shapes the fake server does not send but compatible servers do. */
async function* chunks(
  ...deltas: Array<Partial<OpenAI.ChatCompletionChunk.Choice>>
): AsyncGenerator<OpenAI.ChatCompletionChunk> {
  for (const choice of deltas) {
    yield {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 0,
      model: "m",
      choices: [{ index: 0, delta: {}, finish_reason: null, ...choice }],
    };
  }
}

describe("accumulateOpenAIStream", () => {
  it("fails with a ProviderError when the stream ends without a finish_reason, half a tool call and all", async () => {
    const cut = chunks({
      delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "calculate", arguments: '{"expr' } }] },
    });
    await expect(accumulateOpenAIStream(cut)).rejects.toBeInstanceOf(ProviderError);
  });

  it("keeps a refusal as text and says the model refused", async () => {
    const deltas: string[] = [];
    const message = await accumulateOpenAIStream(
      chunks(
        { delta: { role: "assistant", content: "", refusal: null } },
        { delta: { refusal: "I can't help with that." } },
        { finish_reason: "stop" },
      ),
      { onTextDelta: (d) => deltas.push(d) },
    );
    expect(message.refused).toBe(true);
    expect(message.content).toEqual([{ type: "text", text: "I can't help with that." }]);
    expect(deltas).toEqual(["I can't help with that."]);
  });

  it("gives an id to a tool call that came without one and keeps the first name when a server repeats it", async () => {
    const message = await accumulateOpenAIStream(
      chunks(
        { delta: { tool_calls: [{ index: 0, function: { name: "calculate", arguments: '{"expr' } }] } },
        { delta: { tool_calls: [{ index: 0, function: { name: "calculate", arguments: 'ession":"1+1"}' } }] } },
        { finish_reason: "tool_calls" },
      ),
      { generateId: () => "call_generated" },
    );
    expect(message.content).toEqual([
      { type: "tool_call", id: "call_generated", name: "calculate", input: { expression: "1+1" } },
    ]);
  });

  it("reports progress for each chunk that carries the answer, not for the empty ones some servers send to keep a stream open", async () => {
    let progress = 0;
    await accumulateOpenAIStream(
      chunks(
        { delta: { role: "assistant", content: "" } },
        { delta: {} },
        { delta: { content: "Hi" } },
        { delta: { content: null, tool_calls: [] } },
        { delta: { reasoning_content: "thinking" } as OpenAI.ChatCompletionChunk.Choice.Delta },
        { finish_reason: "stop" },
      ),
      { onProgress: () => progress++ },
    );
    expect(progress).toBe(4);
  });

  it("reads empty arguments as no arguments", async () => {
    const message = await accumulateOpenAIStream(
      chunks(
        { delta: { tool_calls: [{ index: 0, id: "call_1", function: { name: "list_files", arguments: "" } }] } },
        { finish_reason: "tool_calls" },
      ),
    );
    expect(message.content).toEqual([{ type: "tool_call", id: "call_1", name: "list_files", input: {} }]);
  });
});
