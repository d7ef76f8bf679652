import type { BudgetName } from "../core/run-outcome.js";
import type { RunBudget } from "../core/run-settings.js";
import { totalTokens, type Usage } from "../core/usage.js";

// The run's budgets as predicates, each on its own: how much output a call may have within one. How they are
// weighed together, and when the grace call is made, is the stop policy's (stop-policy.ts).

/** What a run has used so far. */
export interface BudgetSpent {
  steps: number;
  usage: Usage;
  /** Null when the model has no price. */
  costUsd: number | null;
  /** Left of `max_seconds`: Infinity without one. */
  timeLeftMs: number;
}

/** The next call as far as it can be weighed before it is made. */
export interface NextCall {
  /** Its input, estimated (calibrated by what the provider counted for earlier calls). */
  inputTokens: number;
  /** Room kept, in this budget, for one more call after it (the grace call): its input. Null: none kept. */
  reserve: { inputTokens: number } | null;
  /** The grace call: it has the grace window, however little time is left. */
  grace: boolean;
}

/**
 * One budget, as a predicate: the most output a call may produce within it
 * (its input and the reserve counted first); Infinity when it sets no limit,
 * below the least useful output when the call does not fit.
 */
export interface StopCondition {
  name: BudgetName;
  room(spent: BudgetSpent, call: NextCall): number;
}

const reserved = (call: NextCall) => call.reserve?.inputTokens ?? 0;

export function tokenBudget(maxTokens: number | null): StopCondition {
  return {
    name: "tokens",
    room: (spent, call) =>
      maxTokens === null ? Infinity : maxTokens - totalTokens(spent.usage) - call.inputTokens - reserved(call),
  };
}

/**
 * `price`: USD per input and per output token (an estimate's input at the
 * uncached price); null for a model without one. An unknown cost never turns
 * the budget off: a call that cannot be priced, or a run whose spend is no
 * longer known (a call of an unpriced model), has no room, and the run stops
 * (requests are refused before it comes to that; this holds when a price
 * went away meanwhile).
 */
export function costBudget(
  maxCostUsd: number | null,
  price: { input: number; output: number } | null,
  /** The price of the call the reserve is kept for (the run's model, when this call is a summary's). @default price */
  reservePrice: { input: number; output: number } | null = price,
): StopCondition {
  return {
    name: "cost",
    room(spent, { inputTokens, reserve }) {
      if (maxCostUsd === null) return Infinity;
      if (price === null || spent.costUsd === null || (reserve && reservePrice === null)) return -1;
      const left =
        maxCostUsd -
        spent.costUsd -
        inputTokens * price.input -
        (reserve ? reserve.inputTokens * reservePrice!.input : 0);
      if (price.output === 0) return left >= 0 ? Infinity : -1;
      return Math.floor(left / price.output);
    },
  };
}

export function timeBudget(): StopCondition {
  return { name: "seconds", room: (spent, call) => (call.grace || spent.timeLeftMs > 0 ? Infinity : -1) };
}

/** The result of a call stopped because the run's time ran out. */
export const TIME_BUDGET_RESULT =
  "tool call was stopped: the run's time budget ran out before it finished; its result is unknown";

/** The run's budgets as conditions: its tokens, its cost (priced by `costOf`; the reserve for the grace call by `reserveCostOf`, the run's model when the call is a summary's), its time. */
export function budgetConditions(
  budget: RunBudget,
  costOf: (usage: Usage) => number | null,
  { reserveCostOf = costOf }: { reserveCostOf?: (usage: Usage) => number | null } = {},
): StopCondition[] {
  return [
    tokenBudget(budget.max_tokens),
    costBudget(budget.max_cost_usd, pricePerToken(costOf), pricePerToken(reserveCostOf)),
    timeBudget(),
  ];
}

/** USD per input and per output token, worked out from `costOf` (it is linear); null for a model without a price. */
function pricePerToken(costOf: (usage: Usage) => number | null): { input: number; output: number } | null {
  const zero = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
  const input = costOf({ ...zero, input_tokens: 1_000_000 });
  const output = costOf({ ...zero, output_tokens: 1_000_000 });
  return input === null || output === null ? null : { input: input / 1e6, output: output / 1e6 };
}
