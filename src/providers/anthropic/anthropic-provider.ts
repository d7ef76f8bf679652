import Anthropic, { APIConnectionError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import type { ModelProvider, ModelRequest, ModelResponse } from "../../core/model-provider.js";
import { createAbortError } from "../shared/abort-error.js";
import { hostOf } from "../shared/host-of.js";
import { toProviderError } from "../shared/to-provider-error.js";
import { accumulateAnthropicStream } from "./accumulate-anthropic-stream.js";
import { mapAnthropicStopReason } from "./map-anthropic-stop-reason.js";
import { buildAnthropicRequest } from "./build-anthropic-request.js";
import { toAnthropicHistory } from "./to-anthropic-history.js";

export interface AnthropicProviderOptions {
  /**
   * The SDK client. Default: `new Anthropic()` made on the first call, so the
   * SDK reads `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL` itself and a missing
   * key fails that run with a `ProviderError` instead of the server's start.
   */
  client?: Anthropic;
  /** @default "claude-sonnet-4-6" */
  defaultModel?: string;
  /** Where the SDK sends requests, for a client made here. @default the SDK's (`ANTHROPIC_BASE_URL`) */
  baseURL?: string | undefined;
  /** The key, for a client made here. @default the SDK's (`ANTHROPIC_API_KEY`) */
  apiKey?: string | undefined;
  /**
   * Retries the SDK makes of its own, for every call (also with a given `client`). loopd retries in one
   * loop of its own (agent/call-model.ts: backoff, Retry-After, fallbacks, cooldown), so the SDK makes none.
   * @default 0
   */
  maxRetries?: number;
}

export function createAnthropicProvider({
  client: givenClient,
  defaultModel = "claude-sonnet-4-6",
  maxRetries = 0,
  baseURL,
  apiKey,
}: AnthropicProviderOptions = {}): ModelProvider {
  let client = givenClient;
  const getClient = (): Anthropic =>
    (client ??= new Anthropic({ ...(baseURL && { baseURL }), ...(apiKey && { apiKey }) }));

  async function generate(request: ModelRequest): Promise<ModelResponse> {
    const { signal, onTextDelta, onProgress, onUsage } = request;
    const model = request.model || defaultModel;
    try {
      const body = buildAnthropicRequest(request, defaultModel);
      request.onRequest?.(body);
      const { data: stream, request_id } = await getClient()
        .messages.create(body, { ...(signal ? { signal } : {}), maxRetries })
        .withResponse();
      const message = await accumulateAnthropicStream(stream, { onTextDelta, onProgress, onUsage });
      // The SDK ends the stream quietly when the signal aborts it.
      if (signal?.aborted) throw createAbortError(signal.reason);
      return {
        content: message.content,
        stopReason: mapAnthropicStopReason(message.rawStopReason),
        rawStopReason: message.rawStopReason,
        usage: message.usage,
        model: message.model ?? model,
        requestId: request_id ?? null,
      };
    } catch (error) {
      throw toProviderError(error, {
        signal,
        url: client?.baseURL,
        label: "Anthropic",
        sdk: { APIError, APIConnectionError, APIUserAbortError },
        apiMessageOf: (e: APIError) => e.apiMessage,
        typeOf: (e: APIError) => e.type,
      });
    }
  }

  return {
    name: "anthropic",
    defaultModel,
    baseUrlHost: () => hostOf(client?.baseURL ?? baseURL ?? process.env.ANTHROPIC_BASE_URL, "api.anthropic.com"),
    generate,
    formatHistory: toAnthropicHistory,
    buildRequest: (request) => buildAnthropicRequest(request, defaultModel),
  };
}
