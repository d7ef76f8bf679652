import type { RunBudget } from "../core/run-settings.js";
import type { Config } from "../config.js";
import { AppError } from "../errors.js";
import type { BudgetInput } from "../store/schema.js";
import type { CeilingSettings } from "./ceiling-config.js";

/** Where each field a 400 names is, for the request that is checked. */
export interface BudgetFields {
  /** The field of the run's model: `body.model` (a message's override), `conversation.model`. */
  model: string;
  /** The field of the summary model: `body.context.summary_model`, `conversation.context.summary_model`. */
  summaryModel: string;
  /** The field of the conversation's cost budget: `body.budget.max_cost_usd` (when it is the body), `conversation.budget.max_cost_usd`. */
  conversationCost: string;
}

/**
 * A run's budget, settled once when it is created: each limit from the
 * request, else the conversation's defaults, else the server's; steps capped
 * by `MAX_STEPS_LIMIT`, tokens, seconds and cost by the operator's ceilings
 * (`RUN_MAX_*_LIMIT`: asking for more, or for no limit, gets the ceiling).
 * A cost limit (the run's, or the tenant's daily one) needs a price for
 * every model the run calls: without one the run could not keep it, so the
 * request is refused (400) naming the model and where the limit came from.
 */
export function settleBudget({
  request,
  maxSteps,
  conversation,
  config,
  model,
  summaryModel,
  priced,
  fields = {
    model: "conversation.model",
    summaryModel: "conversation.context.summary_model",
    conversationCost: "conversation.budget.max_cost_usd",
  },
}: {
  request: BudgetInput | undefined;
  /** The request's top-level `max_steps`, a shorthand for `budget.max_steps`. */
  maxSteps: number | undefined;
  conversation: BudgetInput | null;
  config: Pick<Config, "runs" | "ceilings">;
  model: string;
  /** The model that writes summaries under `context.strategy: "summarize"`; null: none is written, or the run's model writes them. */
  summaryModel: string | null;
  priced: (model: string) => boolean;
  fields?: BudgetFields;
}): RunBudget {
  const pick = <K extends keyof BudgetInput>(key: K) => request?.[key] ?? conversation?.[key];
  const { ceilings } = config;
  const askedCost = pick("max_cost_usd") ?? config.runs.budget.maxCostUsd;
  const budget: RunBudget = {
    max_steps: Math.min(
      request?.max_steps ?? maxSteps ?? conversation?.max_steps ?? config.runs.maxSteps,
      config.runs.maxStepsLimit,
    ),
    max_tokens: capped(pick("max_tokens") ?? config.runs.budget.maxTokens, ceilings.maxTokens),
    max_seconds: capped(pick("max_seconds") ?? config.runs.budget.maxSeconds, ceilings.maxSeconds),
    max_cost_usd: capped(askedCost, ceilings.maxCostUsd),
    grace_turn: pick("grace_turn") ?? true,
  };
  const costSource =
    budget.max_cost_usd === null
      ? ceilings.tenantDailyCostUsd !== null
        ? "TENANT_DAILY_COST_USD"
        : null
      : budget.max_cost_usd !== askedCost
        ? "RUN_MAX_COST_USD_LIMIT"
        : request?.max_cost_usd !== undefined
          ? "body.budget.max_cost_usd"
          : conversation?.max_cost_usd !== undefined
            ? fields.conversationCost
            : "RUN_MAX_COST_USD";
  if (costSource !== null) {
    for (const [m, field] of [
      [model, fields.model],
      ...(summaryModel !== null && summaryModel !== model ? [[summaryModel, fields.summaryModel] as const] : []),
    ] as const) {
      if (priced(m)) continue;
      throw new AppError(
        "invalid_request",
        `${field}: model ${m} has no price, so the cost limit of ${costSource} cannot be kept (an unknown cost would never stop the run); add it to PRICES_FILE, name a priced model, or drop the cost limit`,
        {
          field: costSource,
          model_field: field,
          model: m,
        },
      );
    }
  }
  return budget;
}

/** A conversation's budget defaults as it keeps them: each limit at most the operator's ceiling, so what it shows is what its runs get. */
export function capBudget(
  budget: BudgetInput,
  ceilings: Pick<CeilingSettings, "maxTokens" | "maxSeconds" | "maxCostUsd">,
): BudgetInput {
  const cap = (value: number | undefined, limit: number | null) =>
    value === undefined || limit === null ? value : Math.min(value, limit);
  return {
    ...budget,
    ...(budget.max_tokens !== undefined && { max_tokens: cap(budget.max_tokens, ceilings.maxTokens) }),
    ...(budget.max_seconds !== undefined && { max_seconds: cap(budget.max_seconds, ceilings.maxSeconds) }),
    ...(budget.max_cost_usd !== undefined && { max_cost_usd: cap(budget.max_cost_usd, ceilings.maxCostUsd) }),
  };
}

/** A limit under its ceiling: no limit, or more than the ceiling, is the ceiling. */
const capped = (value: number | null, ceiling: number | null) =>
  ceiling === null ? value : value === null ? ceiling : Math.min(value, ceiling);
