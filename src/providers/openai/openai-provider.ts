import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from "openai";
import type { ModelProvider, ModelRequest, ModelResponse, ModelStopReason } from "../../core/model-provider.js";
import { createAbortError } from "../shared/abort-error.js";
import { hostOf } from "../shared/host-of.js";
import { toProviderError } from "../shared/to-provider-error.js";
import { accumulateOpenAIStream } from "./accumulate-openai-stream.js";
import { buildOpenAIRequest } from "./build-openai-request.js";
import { mapOpenAIStopReason } from "./map-openai-stop-reason.js";
import { toOpenAIHistory } from "./to-openai-history.js";

export interface OpenAIProviderOptions {
  /**
   * The SDK client. Default: `new OpenAI()` made on the first call, so the
   * SDK reads `OPENAI_API_KEY` / `OPENAI_BASE_URL` itself (any compatible
   * server works) and a missing key fails that run with a `ProviderError`
   * instead of the server's start.
   */
  client?: OpenAI;
  /** @default "gpt-4o-mini" */
  defaultModel?: string;
  /** Where the SDK sends requests, for a client made here. @default the SDK's (`OPENAI_BASE_URL`) */
  baseURL?: string | undefined;
  /** The key, for a client made here. @default the SDK's (`OPENAI_API_KEY`) */
  apiKey?: string | undefined;
  /**
   * Retries the SDK makes of its own, for every call (also with a given `client`). loopd retries in one
   * loop of its own (agent/call-model.ts: backoff, Retry-After, fallbacks, cooldown), so the SDK makes none.
   * @default 0
   */
  maxRetries?: number;
}

export function createOpenAIProvider({
  client: givenClient,
  defaultModel = "gpt-4o-mini",
  maxRetries = 0,
  baseURL,
  apiKey,
}: OpenAIProviderOptions = {}): ModelProvider {
  let client = givenClient;
  const getClient = (): OpenAI => (client ??= new OpenAI({ ...(baseURL && { baseURL }), ...(apiKey && { apiKey }) }));

  async function generate(request: ModelRequest): Promise<ModelResponse> {
    const { signal, onTextDelta, onProgress } = request;
    const model = request.model || defaultModel;
    try {
      const body = buildOpenAIRequest(request, defaultModel);
      request.onRequest?.(body);
      const { data: stream, request_id } = await getClient()
        .chat.completions.create(body, {
          ...(signal ? { signal } : {}),
          maxRetries,
        })
        .withResponse();
      const message = await accumulateOpenAIStream(stream, { onTextDelta, onProgress });
      // The SDK ends the stream quietly when the signal aborts it.
      if (signal?.aborted) throw createAbortError(signal.reason);
      const hasToolCalls = message.content.some((b) => b.type === "tool_call");
      let stopReason: ModelStopReason = mapOpenAIStopReason(message.finishReason, { hasToolCalls });
      if (message.refused && stopReason === "end_turn") stopReason = "refusal";
      return {
        content: message.content,
        stopReason,
        rawStopReason: message.finishReason,
        usage: message.usage,
        model: message.model ?? model,
        requestId: request_id ?? null,
      };
    } catch (error) {
      throw toProviderError(error, {
        signal,
        url: client?.baseURL,
        label: "OpenAI",
        sdk: { APIError, APIConnectionError, APIUserAbortError },
        apiMessageOf,
        typeOf: (e: APIError) => e.code ?? e.type ?? null,
      });
    }
  }

  return {
    name: "openai",
    defaultModel,
    baseUrlHost: () => hostOf(client?.baseURL ?? baseURL ?? process.env.OPENAI_BASE_URL, "api.openai.com"),
    generate,
    formatHistory: toOpenAIHistory,
    buildRequest: (request) => buildOpenAIRequest(request, defaultModel),
  };
}

/** `error.error` is the body's `error` object; `error.message` prefixes the status. */
function apiMessageOf(error: APIError): string | null {
  const body: unknown = error.error;
  return typeof body === "object" && body !== null && "message" in body && typeof body.message === "string"
    ? body.message
    : null;
}
