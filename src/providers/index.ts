export { createProviders, providersOf, KEYLESS_SERVER_KEY, type CreateProvidersOptions } from "./create-provider.js";
export { canCall, type ProviderEndpoints } from "./can-call.js";
export { createAnthropicProvider, toAnthropicHistory, type AnthropicProviderOptions } from "./anthropic/index.js";
export { createOpenAIProvider, toOpenAIHistory, type OpenAIProviderOptions } from "./openai/index.js";
export { createMockProvider, type MockProviderOptions } from "./mock/index.js";
