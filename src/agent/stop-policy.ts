import type { BudgetName } from "../core/run-outcome.js";
import type { RunBudget } from "../core/run-settings.js";
import { totalTokens, type Usage } from "../core/usage.js";

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
  /** Room kept, in this budget, for one more call after it (the grace call): its input and its least output. Null: none kept. */
  reserve: { inputTokens: number; outputTokens: number } | null;
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

/** What the loop does before a model call: make it, make it the grace call (tools off, a notice first), or end the run. */
export type StopGate = { type: "go"; maxTokens: number } | { type: "grace"; over: BudgetName; maxTokens: number } | { type: "stop"; over: BudgetName };

/** A call with less room than this for its answer is not worth making. */
export const MIN_OUTPUT_TOKENS = 256;

export function tokenBudget(maxTokens: number | null): StopCondition {
  return {
    name: "tokens",
    room: (spent, call) => (maxTokens === null ? Infinity : maxTokens - totalTokens(spent.usage) - call.inputTokens - reserved(call)),
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
      const left = maxCostUsd - spent.costUsd - inputTokens * price.input - (reserve ? reserve.inputTokens * reservePrice!.input + reserve.outputTokens * reservePrice!.output : 0);
      if (price.output === 0) return left >= 0 ? Infinity : -1;
      return Math.floor(left / price.output);
    },
  };
}

export function timeBudget(): StopCondition {
  return { name: "seconds", room: (spent, call) => (call.grace || spent.timeLeftMs > 0 ? Infinity : -1) };
}

/**
 * What the grace call after this one is expected to send: this call's input
 * and what the step adds to it (its answer, the tools' results), taken as
 * half as much again: that also covers the estimate's own error before the
 * provider's counts have calibrated it. A step that adds more than that
 * leaves no room for the grace call: the run then ends without it, within
 * its budget.
 */
const graceInput = (inputTokens: number) => Math.ceil(inputTokens * 1.5) + 64;

const reserved = (call: NextCall) => (call.reserve ? call.reserve.inputTokens + call.reserve.outputTokens : 0);

/**
 * A run's stop policy: before each model call it weighs what the call will
 * cost against what is left of every budget (its input is known, its output
 * is capped by `maxTokens` of the request), so a budget is never passed by
 * more than the error of an input estimate. While the run may still want a
 * grace call, a normal call leaves room for one. When a normal call does not
 * fit (or only one step is left and the model still wants tools), the next
 * call is the grace call if that fits, else the run stops.
 */
export function createStopPolicy({ budget, maxTokens, conditions }: { budget: RunBudget; maxTokens: number; conditions: StopCondition[] }) {
  const least = Math.min(MIN_OUTPUT_TOKENS, maxTokens);
  const roomOf = (spent: BudgetSpent, call: NextCall) => {
    let room = maxTokens;
    for (const c of conditions) {
      const r = c.room(spent, call);
      if (r < least) return { room: r, over: c.name };
      room = Math.min(room, r);
    }
    return { room, over: null };
  };
  return {
    beforeStep({ spent, inputTokens, afterTools }: { spent: BudgetSpent; inputTokens: number; afterTools: boolean }): StopGate {
      const stepsLeft = budget.max_steps - spent.steps;
      if (stepsLeft <= 0) return { type: "stop", over: "steps" };
      let over: BudgetName = "steps";
      // The grace call is the last of max_steps: one step left after tools is its.
      if (!(budget.grace_turn && stepsLeft === 1 && afterTools)) {
        const reserve = budget.grace_turn && stepsLeft > 1 ? { inputTokens: graceInput(inputTokens), outputTokens: least } : null;
        const normal = roomOf(spent, { inputTokens, reserve, grace: false });
        if (normal.over === null) return { type: "go", maxTokens: normal.room };
        over = normal.over;
      }
      if (!budget.grace_turn) return { type: "stop", over };
      const grace = roomOf(spent, { inputTokens, reserve: null, grace: true });
      return grace.over === null ? { type: "grace", over, maxTokens: grace.room } : { type: "stop", over };
    },
  };
}

export type StopPolicy = ReturnType<typeof createStopPolicy>;

/** The most output a call that is not a step (a summary's) may have within the run's budgets, as a step would be weighed; null when it does not fit. */
export function roomForCall({ budget, maxTokens, conditions, spent, inputTokens }: { budget: RunBudget; maxTokens: number; conditions: StopCondition[]; spent: BudgetSpent; inputTokens: number }): number | null {
  const gate = createStopPolicy({ budget, maxTokens, conditions }).beforeStep({ spent, inputTokens, afterTools: false });
  return gate.type === "go" ? gate.maxTokens : null;
}

const WHAT: Record<BudgetName, string> = { steps: "step", tokens: "token", seconds: "time", cost: "cost" };

/** The notice of a grace turn: which budget, and what the model should do now. */
export const graceNotice = (name: BudgetName) =>
  `Stopping: ${WHAT[name]} budget reached. Answer with what you have: do not call tools; summarize what was done and what is left.`;

/** The result of a call stopped because the run's time ran out. */
export const TIME_BUDGET_RESULT = "tool call was stopped: the run's time budget ran out before it finished; its result is unknown";

/** The run's budgets as conditions: its tokens, its cost (priced by `costOf`; the reserve for the grace call by `reserveCostOf`, the run's model when the call is a summary's), its time. */
export function budgetConditions(budget: RunBudget, costOf: (usage: Usage) => number | null, { reserveCostOf = costOf }: { reserveCostOf?: (usage: Usage) => number | null } = {}): StopCondition[] {
  return [tokenBudget(budget.max_tokens), costBudget(budget.max_cost_usd, pricePerToken(costOf), pricePerToken(reserveCostOf)), timeBudget()];
}

/** USD per input and per output token, worked out from `costOf` (it is linear); null for a model without a price. */
function pricePerToken(costOf: (usage: Usage) => number | null): { input: number; output: number } | null {
  const zero = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
  const input = costOf({ ...zero, input_tokens: 1_000_000 });
  const output = costOf({ ...zero, output_tokens: 1_000_000 });
  return input === null || output === null ? null : { input: input / 1e6, output: output / 1e6 };
}
