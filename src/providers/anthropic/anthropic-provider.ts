import Anthropic, { APIConnectionError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import type { ModelProvider, ModelRequest, ModelResponse } from "../../agent/model.js";
import { createAbortError } from "../shared/abort-error.js";
import { toProviderError } from "../shared/to-provider-error.js";
import { accumulateAnthropicStream } from "./accumulate-anthropic-stream.js";
import { convertToAnthropicMessages } from "./convert-to-anthropic-messages.js";
import { mapAnthropicStopReason } from "./map-anthropic-stop-reason.js";
import { toAnthropicToolParams } from "./map-anthropic-tool-choice.js";

export interface AnthropicProviderOptions {
  /**
   * The SDK client. Default: `new Anthropic()` made on the first call, so the
   * SDK reads `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL` itself and a missing
   * key fails that run with a `ProviderError` instead of the server's start.
   */
  client?: Anthropic;
  /** @default "claude-sonnet-4-5" */
  defaultModel?: string;
  /** Retries the SDK makes on 408/409/429/5xx and connection errors. @default the SDK's (2) */
  maxRetries?: number;
}

export function createAnthropicProvider({
  client: givenClient,
  defaultModel = "claude-sonnet-4-5",
  maxRetries,
}: AnthropicProviderOptions = {}): ModelProvider {
  let client = givenClient;
  const getClient = (): Anthropic => (client ??= new Anthropic(maxRetries === undefined ? {} : { maxRetries }));

  async function generate(request: ModelRequest): Promise<ModelResponse> {
    const { signal, onTextDelta } = request;
    const model = request.model || defaultModel;
    try {
      const stream = await getClient().messages.create(
        {
          model,
          max_tokens: request.maxTokens,
          messages: convertToAnthropicMessages(request.messages),
          ...(request.system ? { system: request.system } : {}),
          ...toAnthropicToolParams(request),
          stream: true,
        },
        { ...(signal ? { signal } : {}), ...(maxRetries === undefined ? {} : { maxRetries }) },
      );
      const message = await accumulateAnthropicStream(stream, { onTextDelta });
      // The SDK ends the stream quietly when the signal aborts it.
      if (signal?.aborted) throw createAbortError(signal.reason);
      return {
        content: message.content,
        stopReason: mapAnthropicStopReason(message.rawStopReason),
        rawStopReason: message.rawStopReason,
        usage: message.usage,
        model: message.model ?? model,
      };
    } catch (error) {
      throw toProviderError(error, {
        signal,
        label: "Anthropic",
        sdk: { APIError, APIConnectionError, APIUserAbortError },
        apiMessageOf: (e: APIError) => e.apiMessage,
      });
    }
  }

  return { name: "anthropic", defaultModel, generate };
}
