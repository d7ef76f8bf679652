export { createAnthropicProvider, type AnthropicProviderOptions } from "./anthropic-provider.js";
export { toAnthropicHistory } from "./to-anthropic-history.js";
export { convertToAnthropicMessages } from "./convert-to-anthropic-messages.js";
