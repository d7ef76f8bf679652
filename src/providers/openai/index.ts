export { createOpenAIProvider, type OpenAIProviderOptions } from "./openai-provider.js";
export { toOpenAIHistory } from "./to-openai-history.js";
export { convertToOpenAIMessages } from "./convert-to-openai-messages.js";
