import type { BudgetName } from "../core/run-outcome.js";
import type { RunBudget } from "../core/run-settings.js";
import { totalTokens, type Usage } from "../core/usage.js";


/** What a run has used so far. */
export interface BudgetSpent {
  steps: number;
  usage: Usage;
  /** Null when the model has no price. */
  costUsd: number | null;
  elapsedMs: number;
}

/**
 * The first budget `spent` has used up, or null. Steps are used up one
 * call early when a grace turn is due: the grace call is the last of
 * `max_steps`.
 */
export function exceededBudget(budget: RunBudget, spent: BudgetSpent): BudgetName | null {
  if (spent.steps >= budget.max_steps - (budget.grace_turn ? 1 : 0)) return "steps";
  if (budget.max_tokens !== null && totalTokens(spent.usage) >= budget.max_tokens) return "tokens";
  if (budget.max_cost_usd !== null && spent.costUsd !== null && spent.costUsd >= budget.max_cost_usd) return "cost";
  if (budget.max_seconds !== null && spent.elapsedMs >= budget.max_seconds * 1000) return "seconds";
  return null;
}

const WHAT: Record<BudgetName, string> = { steps: "step", tokens: "token", seconds: "time", cost: "cost" };

/** The notice of a grace turn: which budget, and what the model should do now. */
export const graceNotice = (name: BudgetName) =>
  `Stopping: ${WHAT[name]} budget reached. Answer with what you have: do not call tools; summarize what was done and what is left.`;

/** The result of a call stopped because the run's time ran out. */
export const TIME_BUDGET_RESULT = "tool call was stopped: the run's time budget ran out before it finished; its result is unknown";
