import type { Services } from "../services.js";
import { AppError } from "../errors.js";
import { canCall, isProviderName, PROVIDERS } from "../providers/registry.js";
import type { ModelFallback } from "../store/schema.js";
import { checkModel } from "./check-model.js";

/** A fallback as a client writes it: without `provider`, the conversation's. */
export interface FallbackInput {
  provider?: string | undefined;
  model: string;
}

/**
 * A fallback chain, each model checked as the conversation's own is (allowed
 * by `MODELS_ALLOWED`, the mock only where it is offered), its provider
 * callable here (a key, or a server that takes none), and priced when a cost
 * limit applies to the runs; each settled with its provider. A 400 names the
 * fallback at fault.
 */
export function checkFallbacks(
  { config, prices }: Pick<Services, "config" | "prices">,
  {
    fallbacks,
    provider,
    costLimit,
    field,
  }: {
    fallbacks: readonly FallbackInput[];
    /** The conversation's provider: what a fallback without one keeps. */
    provider: string;
    /** Where the runs' cost limit comes from (a field or a variable); null: none applies. */
    costLimit: string | null;
    /** `body.fallbacks`, `conversation.fallbacks`. */
    field: string;
  },
): ModelFallback[] {
  return fallbacks.map((fallback, i) => {
    const at = `${field}[${i}]`;
    const p = fallback.provider ?? provider;
    checkModel(config, {
      provider: p,
      model: fallback.model,
      field: { provider: `${at}.provider`, model: `${at}.model` },
    });
    // The conversation's own provider is taken as callable (its runs would fail alike); another must have its key here.
    if (p !== provider && isProviderName(p) && !canCall(p, config.models.providers[p]))
      throw new AppError(
        "invalid_request",
        `${at}.provider: ${p} cannot be called on this server (${PROVIDERS[p].keyVariable ?? "its server"} is not set)`,
        { field: `${at}.provider`, provider: p },
      );
    if (costLimit !== null && prices.priceOf(fallback.model) === null)
      throw new AppError(
        "invalid_request",
        `${at}.model: model ${fallback.model} has no price, so the cost limit of ${costLimit} cannot be kept; add it to PRICES_FILE, name a priced model, or drop the cost limit`,
        { field: costLimit, model_field: `${at}.model`, model: fallback.model },
      );
    return { provider: p, model: fallback.model };
  });
}

/** Where a run's cost limit comes from, given its settled budget: the budget's, or the tenant's daily one; null: none. */
export const costLimitOf = (maxCostUsd: number | null, config: Pick<Services["config"], "ceilings">): string | null =>
  maxCostUsd !== null ? "max_cost_usd" : config.ceilings.tenantDailyCostUsd !== null ? "TENANT_DAILY_COST_USD" : null;
