import type OpenAI from "openai";

/**
 * The baseline: the same chat-completions requests loopd sent (recorded by the
 * fake LLM, byte for byte), made straight through the SDK and streamed to the
 * end, as loopd's OpenAI provider does.
 */
export async function callDirect(client: OpenAI, bodies: readonly unknown[]): Promise<void> {
  for (const body of bodies) {
    const stream = await client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsStreaming);
    for await (const chunk of stream) void chunk;
  }
}
