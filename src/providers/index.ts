export { createProviders, providersOf, KEYLESS_SERVER_KEY, type CreateProvidersOptions, type ProviderEndpoints } from "./create-provider.js";
export { createAnthropicProvider, toAnthropicHistory, type AnthropicProviderOptions } from "./anthropic/index.js";
export { createOpenAIProvider, toOpenAIHistory, type OpenAIProviderOptions } from "./openai/index.js";
export { createMockProvider, type MockProviderOptions } from "./mock/index.js";
