import type { Config } from "../config.js";
import type { ModelProvider, ProviderName } from "../core/model-provider.js";
import { canCall, isProviderName, PROVIDERS, providersOf } from "../providers/registry.js";

/** The options of the commands that call a model again (`npm run replay`, `npm run eval`), for `parseArgs`. */
export const MODEL_OPTIONS = {
  provider: { type: "string" },
  model: { type: "string" },
  "base-url": { type: "string" },
} as const;

export interface ModelOptions {
  provider: ProviderName | undefined;
  model: string | undefined;
  /** The provider's server, for both providers (a proxy, a local OpenAI-compatible server). */
  baseURL: string | undefined;
}

/** What `MODEL_OPTIONS` parsed to; null when `--provider` names no provider. */
export function modelOptionsOf(values: {
  provider?: string | undefined;
  model?: string | undefined;
  "base-url"?: string | undefined;
}): ModelOptions | null {
  const provider = values.provider;
  if (provider !== undefined && !isProviderName(provider)) return null;
  return { provider, model: values.model, baseURL: values["base-url"] };
}

/** The providers with the configured keys and servers, `--base-url` over both. */
export const providersFor = (
  config: Config,
  { baseURL }: Pick<ModelOptions, "baseURL">,
): Record<ProviderName, ModelProvider> => providersOf(config.models.providers, { baseURL });

/** What is said when `--base-url` is given for the mock provider. */
export const MOCK_BASE_URL_NOTE =
  "note: --base-url does not apply to the mock provider (it runs in this process); ignored";

/** Whether a provider can be called with the configured keys (and `--base-url`): true, or what is missing. */
export function callableWith(config: Config, { baseURL }: Pick<ModelOptions, "baseURL">) {
  return (name: ProviderName): string | true => {
    const endpoint = config.models.providers[name];
    if (canCall(name, { apiKey: endpoint.apiKey, baseUrl: baseURL ?? endpoint.baseUrl })) return true;
    const { keyVariable, baseUrlVariable, keyless } = PROVIDERS[name];
    return `no API key for ${name}: ${keyVariable} is not set${keyless ? ` (nor ${baseUrlVariable} or --base-url, a server that takes none)` : ""}`;
  };
}

/** `--agent name@N` (repeatable; `name` alone: its latest version), for `parseArgs`. */
export const AGENT_OPTION = { agent: { type: "string", multiple: true } } as const;

/** An agent's version as `--agent` names it (`version` absent: the latest). */
export interface AgentRef {
  name: string;
  version: number | undefined;
}

const AGENT_REF = /^([a-z0-9_-]{1,48})(?:@([1-9][0-9]{0,8}))?$/;

/** What `--agent` values parsed to, or one line saying which value is not `name` or `name@N`. */
export function agentRefsOf(values: string[] | undefined): { refs: AgentRef[] } | { problem: string } {
  const refs: AgentRef[] = [];
  for (const value of values ?? []) {
    const m = AGENT_REF.exec(value);
    if (!m)
      return {
        problem: `--agent ${JSON.stringify(value)} is not name or name@version (a name is 1–48 of a-z, 0-9, _ and -; a version a whole number from 1)`,
      };
    refs.push({ name: m[1]!, version: m[2] === undefined ? undefined : Number(m[2]) });
  }
  return { refs };
}
