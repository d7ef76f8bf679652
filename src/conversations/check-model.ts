import type { Config } from "../config.js";
import { PROVIDER_NAMES, type ModelProvider, type ProviderName } from "../core/model-provider.js";
import { AppError, OperatorError } from "../errors.js";
import { modelAllowed } from "./ceiling-config.js";
import { isProviderName, PROVIDERS } from "../providers/registry.js";

/**
 * The one gate every model a run may call goes through (a conversation's,
 * a message's override, a summary model; fallbacks too when they come): the
 * mock provider only where it is offered, and only models `MODELS_ALLOWED`
 * lets through. A 400 names the field at fault.
 */
export function checkModel(
  config: Pick<Config, "models" | "ceilings">,
  { provider, model, field }: { provider: string; model: string; field: { provider: string; model: string } },
): void {
  if (isProviderName(provider) && PROVIDERS[provider].offline && !config.models.mockOffered) {
    throw new AppError(
      "invalid_request",
      `${field.provider}: the mock provider is not offered on this server (API keys are on and MOCK_PROVIDER is not true); name ${orList(PROVIDER_NAMES.filter((name) => !PROVIDERS[name].offline))}`,
      {
        field: field.provider,
        provider,
      },
    );
  }
  const allowed = config.ceilings.modelsAllowed;
  if (!modelAllowed(allowed, provider, model)) {
    throw new AppError(
      "invalid_request",
      `${field.model}: ${provider}/${model} is not allowed on this server; allowed: ${allowed!.join(", ")}`,
      {
        field: field.model,
        provider,
        model,
        allowed,
      },
    );
  }
}

/** The provider a conversation gets when it names none; a 400 when the server has none to give (keys on, no model key, no MOCK_PROVIDER). */
export function defaultProviderOf(config: Pick<Config, "models">): ProviderName {
  const provider = config.models.defaultProvider;
  if (provider !== null) return provider;
  throw new AppError(
    "invalid_request",
    `provider: this server has no default model provider (no ${orList(CALLING_VARIABLES)} is set, and the mock provider is offered with API keys on only when MOCK_PROVIDER=true); name one, or ask the operator to set a key or MOCK_PROVIDER=true`,
    { field: "body.provider" },
  );
}

/** At start-up: the model conversations get by default must be one they may use, or every conversation naming none would be refused. */
export function checkDefaultModel(
  config: Pick<Config, "models" | "ceilings">,
  providers: Record<ProviderName, Pick<ModelProvider, "defaultModel">>,
): void {
  const provider = config.models.defaultProvider;
  if (provider === null) return;
  const model = config.models.defaultModel ?? providers[provider].defaultModel;
  if (!modelAllowed(config.ceilings.modelsAllowed, provider, model)) {
    throw new OperatorError(
      `the default model ${provider}/${model} is not among MODELS_ALLOWED (${config.ceilings.modelsAllowed!.join(",")}); set LLM_PROVIDER and LLM_MODEL to one that is, or allow it`,
    );
  }
}

/** The variables that make a provider callable: the keys, and the servers that take none. */
const CALLING_VARIABLES = [
  ...PROVIDER_NAMES.flatMap((name) => PROVIDERS[name].keyVariable ?? []),
  ...PROVIDER_NAMES.flatMap((name) => (PROVIDERS[name].keyless ? (PROVIDERS[name].baseUrlVariable ?? []) : [])),
];

/** `a, b or c`. */
const orList = (items: readonly string[]) =>
  items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
