import { PROVIDER_NAMES, type ModelProvider, type ProviderName } from "../core/model-provider.js";
import { createAnthropicProvider } from "./anthropic/index.js";
import { createMockProvider } from "./mock/index.js";
import { createOpenAIProvider } from "./openai/index.js";

/**
 * Every provider loopd knows, one entry each: the rest of loopd (the
 * configuration's variables, the API's enums, the start-up checks, the CLIs)
 * derives from this table and `PROVIDER_NAMES`, and never names a provider.
 */

/** A model API's key and server, as the configuration holds them (unset: the SDK's own default). */
export interface ProviderEndpoint {
  apiKey: string | undefined;
  baseUrl: string | undefined;
}

export interface ProviderEntry<Options, H extends boolean = boolean> {
  /** The provider from its own options (a test hands it an SDK client). Building it needs no key: the SDK client is made on first use. */
  create(options?: Options): ModelProvider;
  /** Its options from the configured key and server. */
  optionsOf(endpoint: ProviderEndpoint): Options;
  /** The variable of its API key; null: it takes none (it runs in this process). */
  keyVariable: string | null;
  /** The variable of its server's URL; null: it has no server. */
  baseUrlVariable: string | null;
  /** Callable with a server of its own and no key (an OpenAI-compatible local server: Ollama, vLLM, llama.cpp). */
  keyless: boolean;
  /** A stand-in that costs nothing, offered only where the mock is (`MOCK_PROVIDER`, or API keys off). */
  offline: boolean;
  /** Whether `GET …/messages?format=` offers the history in its wire format (`HISTORY_FORMATS`). */
  historyFormat: H;
}

/**
 * An OpenAI-compatible local server (Ollama, vLLM, llama.cpp) takes no key,
 * but the SDK refuses to start without one: given a base URL and no key, it
 * gets this.
 */
export const KEYLESS_SERVER_KEY = "no-key-needed";

/** One entry, its options' type inferred from its `create` (and `historyFormat` kept literal, for `HistoryFormat`). */
const entry = <Options, const H extends boolean>(e: ProviderEntry<Options, H>) => e;

export const PROVIDERS = {
  anthropic: entry({
    create: createAnthropicProvider,
    optionsOf: ({ apiKey, baseUrl }) => ({ apiKey, baseURL: baseUrl }),
    keyVariable: "ANTHROPIC_API_KEY",
    baseUrlVariable: "ANTHROPIC_BASE_URL",
    keyless: false,
    offline: false,
    historyFormat: true,
  }),
  openai: entry({
    create: createOpenAIProvider,
    optionsOf: ({ apiKey, baseUrl }) => ({
      apiKey: apiKey ?? (baseUrl ? KEYLESS_SERVER_KEY : undefined),
      baseURL: baseUrl,
    }),
    keyVariable: "OPENAI_API_KEY",
    baseUrlVariable: "OPENAI_BASE_URL",
    keyless: true,
    offline: false,
    historyFormat: true,
  }),
  mock: entry({
    create: createMockProvider,
    optionsOf: () => ({}),
    keyVariable: null,
    baseUrlVariable: null,
    keyless: true,
    offline: true,
    historyFormat: false,
  }),
} satisfies Record<ProviderName, ProviderEntry<unknown>>;

/** The providers whose wire format `GET …/messages?format=` offers the history in. */
export type HistoryFormat = {
  [N in ProviderName]: (typeof PROVIDERS)[N]["historyFormat"] extends true ? N : never;
}[ProviderName];
export const HISTORY_FORMATS = PROVIDER_NAMES.filter((name) => PROVIDERS[name].historyFormat) as [
  HistoryFormat,
  ...HistoryFormat[],
];

export type ProviderOptions = { [N in ProviderName]: NonNullable<Parameters<(typeof PROVIDERS)[N]["create"]>[0]> };

/** Whether a provider can be called: it needs no key, has one, or (`keyless`) has a server of its own, which needs none. */
export function canCall(name: ProviderName, { apiKey, baseUrl }: ProviderEndpoint): boolean {
  const { keyVariable, keyless } = PROVIDERS[name];
  return keyVariable === null || Boolean(apiKey) || (keyless && Boolean(baseUrl));
}

/** The providers with the configured keys and servers (and `baseURL`, when given, for every one: replay's `--base-url`). */
export function providersOf(
  endpoints: Record<ProviderName, ProviderEndpoint>,
  { baseURL }: { baseURL?: string | undefined } = {},
): Record<ProviderName, ModelProvider> {
  return byName((name) => {
    const endpoint = endpoints[name];
    const { create, optionsOf } = PROVIDERS[name] as ProviderEntry<unknown>;
    return create(optionsOf({ apiKey: endpoint.apiKey, baseUrl: baseURL ?? endpoint.baseUrl }));
  });
}

/**
 * Every provider loopd knows, by name, each from its own options. Building
 * them needs no key: a provider without credentials fails only the runs that
 * use it.
 */
export function createProviders(options: Partial<ProviderOptions> = {}): Record<ProviderName, ModelProvider> {
  return byName((name) => (PROVIDERS[name] as ProviderEntry<unknown>).create(options[name]));
}

/** A value for every provider. */
export const byName = <T>(valueOf: (name: ProviderName) => T): Record<ProviderName, T> =>
  Object.fromEntries(PROVIDER_NAMES.map((name) => [name, valueOf(name)])) as Record<ProviderName, T>;

/** Whether a name is a provider's. */
export const isProviderName = (name: string): name is ProviderName =>
  (PROVIDER_NAMES as readonly string[]).includes(name);
