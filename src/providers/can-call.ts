/** The model APIs' keys and servers, as the configuration holds them. */
export type ProviderEndpoints = Record<
  "anthropic" | "openai",
  { apiKey: string | undefined; baseUrl: string | undefined }
>;

/** Whether a provider can be called: it has a key, or (OpenAI) a server of its own, which needs none (Ollama, vLLM, llama.cpp). */
export const canCall = (
  name: keyof ProviderEndpoints,
  { apiKey, baseUrl }: ProviderEndpoints[keyof ProviderEndpoints],
) => Boolean(apiKey) || (name === "openai" && Boolean(baseUrl));
