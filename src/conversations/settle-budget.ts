import type { RunBudget } from "../core/run-settings.js";
import type { Config } from "../config.js";
import { AppError } from "../errors.js";
import type { BudgetInput } from "../store/schema.js";

/**
 * A run's budget, settled once when it is created: each limit from the
 * request, else the conversation's defaults, else the server's; steps capped
 * by `MAX_STEPS_LIMIT`. A cost limit needs a price for the model: without
 * one the run could not keep it, so the request is refused (400) naming the
 * model and where the limit came from.
 */
export function settleBudget({
  request,
  maxSteps,
  conversation,
  config,
  model,
  priced,
}: {
  request: BudgetInput | undefined;
  /** The request's top-level `max_steps`, a shorthand for `budget.max_steps`. */
  maxSteps: number | undefined;
  conversation: BudgetInput | null;
  config: Pick<Config, "runs">;
  model: string;
  priced: boolean;
}): RunBudget {
  const pick = <K extends keyof BudgetInput>(key: K) => request?.[key] ?? conversation?.[key];
  const budget: RunBudget = {
    max_steps: Math.min(request?.max_steps ?? maxSteps ?? conversation?.max_steps ?? config.runs.maxSteps, config.runs.maxStepsLimit),
    max_tokens: pick("max_tokens") ?? config.runs.budget.maxTokens,
    max_seconds: pick("max_seconds") ?? config.runs.budget.maxSeconds,
    max_cost_usd: pick("max_cost_usd") ?? config.runs.budget.maxCostUsd,
    grace_turn: pick("grace_turn") ?? true,
  };
  if (budget.max_cost_usd !== null && !priced) {
    const field = request?.max_cost_usd !== undefined ? "body.budget.max_cost_usd" : conversation?.max_cost_usd !== undefined ? "conversation.budget.max_cost_usd" : "RUN_MAX_COST_USD";
    throw new AppError("invalid_request", `${field}: model ${model} has no price, so a cost budget cannot be kept; add it to PRICES_FILE or drop the cost limit`, {
      field,
      model,
    });
  }
  return budget;
}
