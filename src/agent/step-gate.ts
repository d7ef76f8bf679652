import type { RunBudget } from "../core/run-settings.js";
import type { Usage } from "../core/usage.js";
import { budgetConditions } from "./budget-conditions.js";
import { graceNotice, graceTurnOf } from "./grace-turn.js";
import type { RunClock } from "./run-clock.js";
import type { RunState } from "./run-state.js";
import { createStopPolicy, type StopGate } from "./stop-policy.js";

/**
 * What stands between a step and its model call: the run's budgets weighed
 * (go, grace or stop), the context summarized when it needs it and then
 * weighed again (the summary's tokens and cost are the run's, and the call is
 * sent less), and the grace notice written before a grace call. `cancelled`:
 * the run was cancelled while its summary was written.
 */
export function createStepGate({
  budget,
  maxTokens,
  costOf,
  state,
  clock,
  summarizeIfNeeded,
}: {
  budget: RunBudget;
  maxTokens: number;
  costOf: (usage: Usage) => number | null;
  state: RunState;
  clock: RunClock;
  summarizeIfNeeded: () => Promise<"written" | "cancelled" | null>;
}) {
  const stop = createStopPolicy({ budget, maxTokens, conditions: budgetConditions(budget, costOf) });
  const weigh = (afterTools: boolean) =>
    stop.beforeStep({
      spent: {
        steps: state.steps,
        usage: state.usage,
        costUsd: state.usage.cost_usd ?? null,
        timeLeftMs: clock.timeLeftMs(),
      },
      inputTokens: state.context().estimatedTokens,
      afterTools,
      shown: state.shown(),
      graceTurn: graceTurnOf(state.history),
    });
  /** `afterTools`: the step before this one ran tools (the run's last step may then be its grace call). */
  return async function gateStep(afterTools: boolean): Promise<StopGate | { type: "cancelled" }> {
    let gate = weigh(afterTools);
    if (gate.type === "stop") return gate;
    const summarized = await summarizeIfNeeded();
    if (summarized === "cancelled") return { type: "cancelled" };
    if (summarized === "written" && (gate = weigh(afterTools)).type === "stop") return gate;
    if (gate.type === "grace") await state.appendNotice(graceNotice(gate.over));
    return gate;
  };
}
