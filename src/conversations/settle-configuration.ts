import type { ProviderName } from "../core/model-provider.js";
import { AppError } from "../errors.js";
import type { Services } from "../services.js";
import type { Configuration } from "../store/schema.js";
import { toolsOfTenant } from "../tools/tools-of-tenant.js";
import { checkWebhookUrl } from "../webhooks/check-webhook-url.js";
import { checkConversationModels } from "./check-conversation-models.js";
import { defaultProviderOf } from "./check-model.js";
import { checkFallbacks, costLimitOf } from "./check-fallbacks.js";
import { checkToolSettings } from "./check-tool-settings.js";
import { checkAgents } from "./check-agents.js";
import { capBudget } from "./settle-budget.js";

/**
 * A configuration (a conversation's fields as a client wrote them, an agent
 * version's, or the two merged) as a conversation's settings: every default
 * filled in (the server's provider and model, every built-in tool) and every
 * field checked, as it is for each new conversation and each agent version.
 * 400s name the field (`body.tools`, `body.model`, …).
 */
export async function settleConfiguration(services: Services, tenant: string, input: Configuration) {
  const { config } = services;
  const provider = input.provider ?? defaultProviderOf(config);
  const model = input.model ?? defaultModelOf(services, provider);
  const budget = input.budget ? capBudget(input.budget, config.ceilings) : null;
  const settled = checkConversationModels(services, {
    provider,
    model,
    context: input.context,
    budget,
    fields: BODY_FIELDS,
  });
  const fallbacks = checkFallbacks(services, {
    fallbacks: input.fallbacks ?? [],
    provider,
    costLimit: costLimitOf(settled.max_cost_usd, config),
    field: "body.fallbacks",
  });
  // run_command is offered only to a conversation that names it.
  const tools = checkTools(services, tenant, input.tools ?? services.registry.defaults());
  if (input.webhook) await checkWebhookUrl(input.webhook.url, { config, field: "body.webhook.url", tenant });
  return {
    system: input.system ?? null,
    provider,
    model,
    tools,
    metadata: input.metadata ?? {},
    ...checkToolSettings({
      tools,
      approvalRequired: input.approval_required ?? [],
      clientTools: input.client_tools ?? [],
    }),
    actionTimeoutS: input.action_timeout_s ?? null,
    budget,
    finish: input.finish ?? null,
    context: input.context ?? null,
    caching: input.caching ?? true,
    onProviderOutage: input.on_provider_outage ?? "fail",
    webhook: input.webhook ?? null,
    fallbacks: fallbacks.length > 0 ? fallbacks : null,
    agents: await checkAgents(services, tenant, input.agents ?? []),
  };
}

/** The model a conversation of `provider` gets when it names none. */
export const defaultModelOf = (
  { config, providers }: Pick<Services, "config" | "providers">,
  provider: ProviderName,
) =>
  provider === config.models.defaultProvider && config.models.defaultModel
    ? config.models.defaultModel
    : providers[provider].defaultModel;

/** Tool names the tenant may give a conversation, without repeats; a 400 naming the unknown ones. */
export function checkTools(
  { config, registry }: Pick<Services, "config" | "registry">,
  tenant: string,
  tools: string[],
) {
  const offered = toolsOfTenant(registry, { tenant, commandTenants: config.tools.sandbox.runCommandTenants });
  const unknown = tools.filter((name) => !offered.accepts(name));
  if (unknown.length > 0) {
    throw new AppError(
      "invalid_request",
      `unknown tool ${unknown.map((n) => JSON.stringify(n)).join(", ")}; available: ${offered.names().join(", ")}`,
      { field: "body.tools", unknown, available: offered.names() },
    );
  }
  return [...new Set(tools)];
}

/** The fields a 400 about a conversation's models names: the body's, or the conversation's as it stands. */
export const BODY_FIELDS = {
  provider: "body.provider",
  model: "body.model",
  summaryModel: "body.context.summary_model",
  conversationCost: "body.budget.max_cost_usd",
};
