import type { ProviderName } from "../../core/model-provider.js";
import { modelAllowed } from "../../conversations/ceiling-config.js";
import { isProviderName, PROVIDERS } from "../../providers/registry.js";
import type { Services } from "../../services.js";
import { openAiError } from "../openai-errors.js";

/** What `model` names: an agent (at a version, or its latest), or a model of a provider. */
export type ModelTarget =
  | { kind: "agent"; name: string; version: number | undefined }
  | { kind: "model"; provider: ProviderName; model: string };

const notFound = (model: string, why: string) =>
  openAiError("not_found", `The model '${model}' does not exist or you do not have access to it (${why}).`, {
    param: "model",
    openaiCode: "model_not_found",
  });

/**
 * `agent:<name>[@<version>]` (one of the tenant's agents), `<provider>/<model>`
 * (a provider loopd has; a `/` after another word is part of a bare name,
 * as `meta-llama/Llama-3`), or a bare model name of the default provider.
 * An unknown agent or version, a provider not offered, or a model
 * `MODELS_ALLOWED` leaves out: 404 `model_not_found` (param `model`).
 */
export async function resolveModel(
  { config, store }: Pick<Services, "config" | "store">,
  { tenant, model }: { tenant: string; model: string },
): Promise<ModelTarget> {
  if (model.startsWith("agent:")) {
    const [name = "", at] = model.slice("agent:".length).split("@");
    const version = at === undefined ? undefined : Number(at);
    if (version !== undefined && !(Number.isInteger(version) && version > 0))
      throw notFound(model, "a version is a whole number: agent:<name>@<version>");
    const agent = name === "" ? undefined : await store.agents.get(tenant, name, version);
    if (!agent)
      throw notFound(model, version === undefined ? `no agent ${name}` : `no agent ${name} at version ${version}`);
    if (agent.archivedAt) throw notFound(model, `agent ${name} is archived`);
    return { kind: "agent", name, version: agent.at.version };
  }
  const slash = model.indexOf("/");
  const prefix = slash > 0 ? model.slice(0, slash) : "";
  const named = isProviderName(prefix);
  const provider = named ? prefix : config.models.defaultProvider;
  if (provider === null) throw notFound(model, "this server has no default provider: name one as <provider>/<model>");
  const name = named ? model.slice(slash + 1) : model;
  if (name === "") throw notFound(model, "no model named after the provider");
  if (PROVIDERS[provider].offline && !config.models.mockOffered)
    throw notFound(model, `${provider} is not offered here`);
  if (!modelAllowed(config.ceilings.modelsAllowed, provider, name))
    throw notFound(model, "MODELS_ALLOWED leaves it out");
  return { kind: "model", provider, model: name };
}
