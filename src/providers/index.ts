export {
  PROVIDERS,
  createProviders,
  providersOf,
  canCall,
  KEYLESS_SERVER_KEY,
  type ProviderEndpoint,
  type ProviderEntry,
  type ProviderOptions,
} from "./registry.js";
export { createAnthropicProvider, toAnthropicHistory, type AnthropicProviderOptions } from "./anthropic/index.js";
export { createOpenAIProvider, toOpenAIHistory, type OpenAIProviderOptions } from "./openai/index.js";
export { createMockProvider, type MockProviderOptions } from "./mock/index.js";
