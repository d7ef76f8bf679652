import type { BudgetName } from "../core/run-outcome.js";
import type { RunBudget } from "../core/run-settings.js";
import { NOTICE_TOKENS, type GraceTurn } from "./grace-turn.js";
import type { BudgetSpent, NextCall, StopCondition } from "./budget-conditions.js";

export { graceNotice, graceTurnOf } from "./grace-turn.js";

/** What the run's steps have shown, in tokens: the most a step added to the next call's input (its answer, its tools' results), and the longest answer. */
export interface StepsShown {
  growth: number;
  output: number;
}

/** What the loop does before a model call: make it, make it the grace call (tools off, a notice first), or end the run. */
export type StopGate =
  | { type: "go"; maxTokens: number }
  | { type: "grace"; over: BudgetName; maxTokens: number }
  | { type: "stop"; over: BudgetName };

/** A call with less room than this for its answer is not worth making. */
export const MIN_OUTPUT_TOKENS = 256;

/** Before the run's first step has shown anything, a step is taken to add a tenth of its input and to answer with as much: a modest share. */
const FIRST_STEP_SHARE = 0.1;

/**
 * What the step about to be made is expected to cost beyond its input, from
 * what the run's steps have shown (the largest seen, so a step like the
 * worst one so far still leaves its grace call room): its answer, and how
 * much bigger it makes the grace call's input than its own (the answer, the
 * tools' results, the notice).
 */
function expectedOf(inputTokens: number, shown: StepsShown | null): StepsShown {
  const share = Math.ceil(inputTokens * FIRST_STEP_SHARE);
  // Before any step: its answer a share, and its tools' results as much again.
  const { growth, output } = shown ?? { growth: 2 * share, output: share };
  return { growth: growth + NOTICE_TOKENS, output };
}

/**
 * A run's stop policy: before each model call it weighs what the call will
 * cost against what is left of every budget (its input is known, its output
 * is capped by `maxTokens` of the request), so a budget is never passed by
 * more than the error of an input estimate. While the run may still want a
 * grace call, a normal call is made only if it and the grace call after it
 * fit as the run's steps have shown them (the step's answer, the grace call's
 * input grown as a step grows it, the least useful answer), and its output is
 * capped to leave the grace call its input: so a budget that affords a tool
 * step and the grace call gets both, and a step that grows the context more
 * than shown ends the run within its budget, without the grace call. When a
 * normal call does not fit (or only one step is left and the model still
 * wants tools), the next call is the grace call if that fits, else the run
 * stops. A run whose history holds its grace turn (`graceTurn`, a run taken
 * up again after a crash) makes that grace call, or ends if it was made.
 */
export function createStopPolicy({
  budget,
  maxTokens,
  conditions,
}: {
  budget: RunBudget;
  maxTokens: number;
  conditions: StopCondition[];
}) {
  const least = Math.min(MIN_OUTPUT_TOKENS, maxTokens);
  /** The room of the tightest budget (`budgeted`: Infinity when none limits it), and the call's output limit under it. */
  const roomOf = (spent: BudgetSpent, call: NextCall, needed: number) => {
    let budgeted = Infinity;
    for (const c of conditions) {
      const r = c.room(spent, call);
      if (r < needed) return { room: r, budgeted: r, over: c.name };
      budgeted = Math.min(budgeted, r);
    }
    return { room: Math.min(maxTokens, budgeted), budgeted, over: null };
  };
  return {
    beforeStep({
      spent,
      inputTokens,
      afterTools,
      shown = null,
      graceTurn = null,
    }: {
      spent: BudgetSpent;
      inputTokens: number;
      afterTools: boolean;
      /** What the run's steps have shown; null before its first (or the first since it was taken up again). */
      shown?: StepsShown | null;
      /** The grace turn the history holds (see `graceTurnOf`). */
      graceTurn?: GraceTurn | null;
    }): StopGate {
      // The grace call was made: it was the run's last, whatever the budgets say now.
      if (graceTurn?.answered) return { type: "stop", over: graceTurn.over };
      const stepsLeft = budget.max_steps - spent.steps;
      if (stepsLeft <= 0) return { type: "stop", over: "steps" };
      let over: BudgetName = graceTurn?.over ?? "steps";
      // The grace call is the last of max_steps: one step left after tools is its. A grace turn begun is carried on.
      if (!graceTurn && !(budget.grace_turn && stepsLeft === 1 && afterTools)) {
        const expected = expectedOf(inputTokens, shown);
        const reserve = budget.grace_turn && stepsLeft > 1 ? { inputTokens: inputTokens + expected.growth } : null;
        const normal = roomOf(spent, { inputTokens, reserve, grace: false }, reserve ? expected.output + least : least);
        // The answer is part of the grace call's input too: whatever it writes beyond the expected answer counts twice, so it may write half of what is left beyond that.
        if (normal.over === null)
          return {
            type: "go",
            maxTokens: reserve
              ? Math.min(normal.room, Math.floor((normal.budgeted + expected.output - least) / 2))
              : normal.room,
          };
        over = normal.over;
      }
      if (!budget.grace_turn) return { type: "stop", over };
      const grace = roomOf(spent, { inputTokens, reserve: null, grace: true }, least);
      return grace.over === null ? { type: "grace", over, maxTokens: grace.room } : { type: "stop", over };
    },
  };
}

export type StopPolicy = ReturnType<typeof createStopPolicy>;

/** The most output a call that is not a step (a summary's) may have within the run's budgets, as a step would be weighed; null when it does not fit. */
export function roomForCall({
  budget,
  maxTokens,
  conditions,
  spent,
  inputTokens,
  shown = null,
}: {
  budget: RunBudget;
  maxTokens: number;
  conditions: StopCondition[];
  spent: BudgetSpent;
  inputTokens: number;
  shown?: StepsShown | null;
}): number | null {
  const gate = createStopPolicy({ budget, maxTokens, conditions }).beforeStep({
    spent,
    inputTokens,
    afterTools: false,
    shown,
  });
  return gate.type === "go" ? gate.maxTokens : null;
}
