import { z } from "zod";
import { PROVIDER_NAMES, type ProviderName } from "../core/model-provider.js";
import { canCall, PROVIDERS, type ProviderEndpoint } from "../providers/registry.js";
import { optionalString, optionalUrl } from "../util/env-values.js";

/**
 * The variables of the model providers (composed into config.ts's): the
 * default provider and model, and each provider's key and server, named by
 * its entry in providers/registry.ts.
 */
export const modelVariables = {
  LLM_PROVIDER: z.preprocess((v) => (v === "" ? undefined : v), z.enum(PROVIDER_NAMES).optional()),
  LLM_MODEL: optionalString,
  // Typed as no keys: they are read back by name, in `endpointsOf`.
  ...(Object.fromEntries(
    PROVIDER_NAMES.flatMap((name) => {
      const { keyVariable, baseUrlVariable } = PROVIDERS[name];
      return [
        ...(keyVariable ? [[keyVariable, optionalString]] : []),
        ...(baseUrlVariable ? [[baseUrlVariable, optionalUrl]] : []),
      ];
    }),
  ) as Record<string, typeof optionalString | typeof optionalUrl>),
};

/** Each provider's key and server, from the parsed variables. */
export function endpointsOf(e: Record<string, unknown>): Record<ProviderName, ProviderEndpoint> {
  const valueOf = (variable: string | null) => (variable ? (e[variable] as string | undefined) : undefined);
  return Object.fromEntries(
    PROVIDER_NAMES.map((name) => {
      const { keyVariable, baseUrlVariable } = PROVIDERS[name];
      return [name, { apiKey: valueOf(keyVariable), baseUrl: valueOf(baseUrlVariable) }];
    }),
  ) as Record<ProviderName, ProviderEndpoint>;
}

/** Whether a provider is the offline stand-in (the mock), offered only where `mockOffered`. */
export const isOffline = (name: ProviderName) => PROVIDERS[name].offline;

/**
 * The provider conversations get when they name none: `LLM_PROVIDER`, or the
 * first with a key or a server (an OpenAI-compatible local server needs no
 * key), or the mock where it is offered; null: none (a conversation must name one).
 */
export function defaultProviderOf({
  named,
  endpoints,
  mockOffered,
}: {
  named: ProviderName | undefined;
  endpoints: Record<ProviderName, ProviderEndpoint>;
  mockOffered: boolean;
}): ProviderName | null {
  return (
    named ??
    PROVIDER_NAMES.find((name) => !isOffline(name) && canCall(name, endpoints[name])) ??
    (mockOffered ? PROVIDER_NAMES.find(isOffline) : undefined) ??
    null
  );
}
