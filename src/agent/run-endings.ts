import { isInterruption, isSuperseded } from "../core/interruptions.js";
import type { BudgetName, RunOutcome } from "../core/run-outcome.js";
import type { RunState } from "./run-state.js";

/** Ends a run its signal aborted: cancelled or superseded; an interruption (shutdown, lost lease) leaves it to resume. */
export function endCancelled(state: RunState, signal: AbortSignal | undefined): Promise<RunOutcome> {
  return state.end(
    { status: "cancelled", stopReason: isSuperseded(signal) ? "superseded" : "cancelled" },
    { interrupted: isInterruption(signal) },
  );
}

/** Ends a run one of its budgets stopped. */
export function endOverBudget(state: RunState, over: BudgetName): Promise<RunOutcome> {
  return state.end({
    status: "incomplete",
    stopReason: over === "steps" ? "max_steps" : "budget",
    budgetExceeded: over,
  });
}
