import type { ModelProvider, ProviderName } from "../agent/model.js";
import { createAnthropicProvider, type AnthropicProviderOptions } from "./anthropic/index.js";
import { createMockProvider, type MockProviderOptions } from "./mock/index.js";
import { createOpenAIProvider, type OpenAIProviderOptions } from "./openai/index.js";

export interface CreateProvidersOptions {
  anthropic?: AnthropicProviderOptions;
  openai?: OpenAIProviderOptions;
  mock?: MockProviderOptions;
}

/**
 * Every provider loopd knows, by name. Building them needs no key: the SDK
 * clients are made on first use, so a provider without credentials fails
 * only the runs that use it.
 */
export function createProviders({ anthropic, openai, mock }: CreateProvidersOptions = {}): Record<ProviderName, ModelProvider> {
  return {
    anthropic: createAnthropicProvider(anthropic),
    openai: createOpenAIProvider(openai),
    mock: createMockProvider(mock),
  };
}
