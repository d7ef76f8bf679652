import type OpenAI from "openai";
import type { ModelRequestBody } from "../../core/model-provider.js";
import { convertToOpenAIMessages } from "./convert-to-openai-messages.js";
import { toOpenAIToolParams } from "./map-openai-tool-choice.js";

/**
 * The Chat Completions request for a model call. OpenAI caches prompt
 * prefixes by itself; with caching on, `prompt_cache_key` (the
 * conversation's id) routes a conversation's calls to the same cache.
 */
export function buildOpenAIRequest(
  request: ModelRequestBody,
  defaultModel: string,
): OpenAI.ChatCompletionCreateParamsStreaming {
  return {
    model: request.model || defaultModel,
    messages: convertToOpenAIMessages(request.system, request.messages, request.attachments),
    ...toOpenAIToolParams(request),
    max_completion_tokens: request.maxTokens,
    ...(request.cacheKey ? { prompt_cache_key: request.cacheKey } : {}),
    stream: true,
    stream_options: { include_usage: true },
  };
}
