import type { NewMessage } from "../../core/messages.js";
import type { Usage } from "../../core/usage.js";
import type { ModelProvider, ModelRequest, ModelRequestBody, ModelResponse } from "../../core/model-provider.js";
import { throwIfAborted } from "../shared/abort-error.js";
import { planMockReply, type MockReply } from "./plan-mock-reply.js";
import { mockSummary } from "./mock-summary.js";
import { SUMMARY_SYSTEM } from "../../core/summary-system.js";

export interface MockProviderOptions {
  /** @default "loopd-mock" */
  defaultModel?: string;
  /** Pause between streamed words, to watch streaming by eye. @default 0 */
  chunkDelayMs?: number;
}

/**
 * A deterministic offline stand-in for a model, so loopd can be tried with no
 * API key: it is **not** a model. It calls `get_current_time` for "what time
 * is it in Tokyo", `calculate` for "what is (3+4)^2", answers from the tool
 * results, and otherwise says what it is and how to set a real key. It
 * streams its text word by word through `onTextDelta`, estimates usage at
 * four characters a token, and honours `signal`. The rules are in
 * `planMockReply`.
 */
export function createMockProvider({
  defaultModel = "loopd-mock",
  chunkDelayMs = 0,
}: MockProviderOptions = {}): ModelProvider {
  async function generate(request: ModelRequest): Promise<ModelResponse> {
    const { signal, onTextDelta, onProgress } = request;
    throwIfAborted(signal);
    request.onRequest?.(buildRequest(request));
    const reply: MockReply =
      request.system === SUMMARY_SYSTEM
        ? { content: [{ type: "text", text: mockSummary(request.messages) }], stopReason: "end_turn" }
        : planMockReply(request);
    for (const block of reply.content) {
      if (block.type !== "text") continue;
      for (const word of block.text.match(/\S+\s*|\s+/g) ?? []) {
        await pause(chunkDelayMs);
        throwIfAborted(signal);
        onTextDelta?.(word);
        onProgress?.();
      }
    }
    await pause(0);
    throwIfAborted(signal);
    return {
      content: reply.content,
      stopReason: reply.stopReason,
      rawStopReason: reply.stopReason,
      usage: estimateUsage(request, reply.content),
      model: request.model || defaultModel,
    };
  }

  // The mock takes loopd's own messages as they are.
  const formatHistory = (system: string | null, messages: readonly NewMessage[]) => ({
    system,
    messages: [...messages],
  });
  // What the mock is "sent": the request as loopd holds it.
  const buildRequest = (request: ModelRequestBody) => ({
    model: request.model || defaultModel,
    system: request.system,
    messages: [...request.messages],
    tools: request.tools,
    tool_choice: request.toolChoice,
    max_tokens: request.maxTokens,
  });
  return { name: "mock", defaultModel, baseUrlHost: () => "in-process", generate, formatHistory, buildRequest };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));
}

function estimateUsage(request: ModelRequest, output: NewMessage["content"]): Usage {
  const tokens = (chars: number) => Math.ceil(chars / 4);
  const inputChars =
    (request.system?.length ?? 0) + request.messages.reduce((sum, m) => sum + JSON.stringify(m.content).length, 0);
  return {
    input_tokens: tokens(inputChars),
    output_tokens: tokens(JSON.stringify(output).length),
    cache_read_tokens: 0,
    cache_write_tokens: 0,
  };
}
