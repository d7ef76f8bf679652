import type { ModelProvider, ProviderName } from "../core/model-provider.js";
import { createAnthropicProvider, type AnthropicProviderOptions } from "./anthropic/index.js";
import { canCall, type ProviderEndpoints } from "./can-call.js";
import { createMockProvider, type MockProviderOptions } from "./mock/index.js";
import { createOpenAIProvider, type OpenAIProviderOptions } from "./openai/index.js";

export interface CreateProvidersOptions {
  anthropic?: AnthropicProviderOptions;
  openai?: OpenAIProviderOptions;
  mock?: MockProviderOptions;
}

/**
 * An OpenAI-compatible local server (Ollama, vLLM, llama.cpp) takes no key,
 * but the SDK refuses to start without one: given a base URL and no key, it
 * gets this.
 */
export const KEYLESS_SERVER_KEY = "no-key-needed";

/** The providers with the configured keys and servers (and `baseURL`, when given, for both: replay's `--base-url`). */
export function providersOf(
  endpoints: ProviderEndpoints,
  { baseURL }: { baseURL?: string | undefined } = {},
): Record<ProviderName, ModelProvider> {
  const { anthropic, openai } = endpoints;
  const openaiUrl = baseURL ?? openai.baseUrl;
  return createProviders({
    anthropic: { apiKey: anthropic.apiKey, baseURL: baseURL ?? anthropic.baseUrl },
    openai: {
      apiKey:
        openai.apiKey ??
        (canCall("openai", { apiKey: undefined, baseUrl: openaiUrl }) ? KEYLESS_SERVER_KEY : undefined),
      baseURL: openaiUrl,
    },
  });
}

/**
 * Every provider loopd knows, by name. Building them needs no key: the SDK
 * clients are made on first use, so a provider without credentials fails
 * only the runs that use it.
 */
export function createProviders({ anthropic, openai, mock }: CreateProvidersOptions = {}): Record<
  ProviderName,
  ModelProvider
> {
  return {
    anthropic: createAnthropicProvider(anthropic),
    openai: createOpenAIProvider(openai),
    mock: createMockProvider(mock),
  };
}
