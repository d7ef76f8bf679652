import type { BudgetName, RunOutcome } from "../core/run-outcome.js";
import { errorResultFor, repairTail } from "../core/history.js";
import type { AgentRunOptions } from "./agent-run-options.js";
import { callModel } from "./call-model.js";
import { decideTurn } from "./decide-turn.js";
import { estimateFixedTokens } from "./estimate-tokens.js";
import { createFinishChecker, FINISH_NUDGE, finishResults } from "./finish-tool.js";
import { prepareStep, type CallSettings } from "./prepare-step.js";
import { createRunClock } from "./run-clock.js";
import { endCancelled, endOverBudget } from "./run-endings.js";
import { createRunState } from "./run-state.js";
import { runApprovedCalls, runTools } from "./run-tools.js";
import { createStepGate } from "./step-gate.js";
import { createSummarizer } from "./summarize-context.js";

/**
 * The tool-calling loop, as data: before each call the stop policy says go,
 * grace or stop; the call is prepared, made, and its answer decided into a
 * `Turn`, which one switch carries out. Every message is saved before
 * anything acts on it, so a crash loses at most the call in flight (and
 * its answer's calls if they only read: it goes with their results); what ends
 * the run (the last answer, the results that close it) is saved with the
 * run's end, in one write. The history handed to the model never has an
 * orphan call.
 */
export async function runAgentLoop(o: AgentRunOptions): Promise<RunOutcome> {
  const { provider, toolBox, signal, now = Date.now, onEvent: emit = () => {} } = o;
  const settings: CallSettings = {
    ...o.call,
    tools: toolBox.specs,
    fixedTokens: estimateFixedTokens({ system: o.call.system, tools: toolBox.specs }),
  };
  const state = createRunState({ ...o, ...o.resume, context: settings.context, fixedTokens: settings.fixedTokens });
  const clock = createRunClock({
    startedAt: o.resume?.clockStartedAt ?? now(),
    maxSeconds: o.budget.max_seconds,
    ...o.limits,
    now,
  });
  const checkFinish = o.finish ? createFinishChecker(o.finish, { signal }) : null;
  const tools = { toolBox, state, clock, signal, emit };
  const summarizeIfNeeded = createSummarizer({
    provider,
    settings,
    state,
    clock,
    signal,
    idleMs: o.limits.modelStreamIdleMs,
    emit,
    now,
    budget: o.budget,
    costOf: o.costOf,
  });
  const gateStep = createStepGate({ ...o, maxTokens: settings.maxTokens, state, clock, summarizeIfNeeded });
  const cancelled = () => endCancelled(state, signal);
  const overBudget = (over: BudgetName) => endOverBudget(state, over);

  const stillWaiting = await runApprovedCalls(o.resume?.approvedCalls ?? [], { ...tools, flushEvents: o.flushEvents });
  if (stillWaiting.length > 0) return state.pause(stillWaiting);
  let afterTools = state.history.at(-1)?.role === "tool"; // the approved calls', or those a crash cut off (recovery answered them)

  for (;;) {
    // New runs are taken in first (the intake's wait): the wait is part of the step, weighed with it; a cancel ends it.
    await o.beforeStep?.({ signal, atMostMs: clock.timeLeftMs() });
    if (signal?.aborted) return cancelled();
    // A crash or an earlier cancel may have left calls unanswered; answer them first.
    await state.append(repairTail(state.history));
    const gate = await gateStep(afterTools);
    if (gate.type === "cancelled") return cancelled();
    if (gate.type === "stop") return overBudget(gate.over);
    const step = prepareStep({ state, settings, gate, clock });
    const called = await callModel(step, {
      provider,
      ...(o.fallbacks && { fallbacks: o.fallbacks }),
      ...(o.resilience && { resilience: o.resilience }),
      state,
      clock,
      signal,
      idleMs: o.limits.modelStreamIdleMs,
      emit,
      now,
    });
    if (called.type === "cancelled") return cancelled();
    if (called.type === "out_of_time") return overBudget("seconds");
    if (called.type === "failed") return state.end({ status: "failed", stopReason: "error", error: called.error });

    const turn = await decideTurn(called.response, {
      step,
      toolBox,
      checkFinish,
      nudged: () => state.nudgedSinceUser(FINISH_NUDGE),
    });
    afterTools = false;
    switch (turn.type) {
      case "call_again":
        continue;
      case "nudge_finish":
        await state.appendNotice(FINISH_NUDGE);
        continue;
      case "end":
        state.hold(turn.unexecuted.map((call) => errorResultFor(call, turn.why)));
        return state.end(turn.ending);
      case "finish":
        state.hold(finishResults(turn));
        return state.end({ status: "completed", stopReason: "finish", result: turn.result });
      case "run_tools": {
        // The answer is durable before its calls run, unless they only read: then it goes with their results.
        await (turn.run.every((call) => toolBox.readOnly(call)) ? state.appendSoon() : state.append([]));
        const waits = [...turn.waiting, ...(await runTools(turn.run, tools))];
        await state.append(turn.refused.map(({ call, message }) => errorResultFor(call, message)));
        if (signal?.aborted) return cancelled();
        // The application decides the rest (what a child run waits on too): the run waits, holding nothing.
        if (waits.length > 0) return state.pause(waits);
        afterTools = true;
        continue;
      }
    }
  }
}
