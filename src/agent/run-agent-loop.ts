import type { AgentEvent } from "../core/agent-events.js";
import { isInterruption, isSuperseded } from "../core/interruptions.js";
import type { NewMessage } from "../core/messages.js";
import type { ModelProvider } from "../core/model-provider.js";
import type { BudgetName, RunOutcome } from "../core/run-outcome.js";
import type { FinishOptions, RunBudget } from "../core/run-settings.js";
import type { RunUsage, Usage } from "../core/usage.js";
import type { ToolBox } from "../tools/tool-box.js";
import { callModel } from "./call-model.js";
import { decideTurn } from "./decide-turn.js";
import { estimateFixedTokens } from "./estimate-tokens.js";
import { createFinishChecker, FINISH_NUDGE, finishResults } from "./finish-tool.js";
import { prepareStep, type CallSettings } from "./prepare-step.js";
import { errorResultFor, repairTail } from "../core/history.js";
import { createRunClock } from "./run-clock.js";
import { createRunState, type SaveMessages } from "./run-state.js";
import { runTools } from "./run-tools.js";
import { createSummarizer } from "./summarize-context.js";
import { budgetConditions } from "./budget-conditions.js";
import { createStopPolicy, graceNotice, graceTurnOf } from "./stop-policy.js";

export interface AgentRunOptions {
  provider: ModelProvider;
  /** The conversation so far, the new user message included, all of it already saved. */
  history: NewMessage[];
  save: SaveMessages;
  toolBox: ToolBox;
  /** What every model call of the run shares (its tools are the tool box's). */
  call: Omit<CallSettings, "tools" | "fixedTokens">;
  budget: RunBudget;
  /** The run ends with a `finish` call (offered as a tool); a plain answer gets one nudge first. */
  finish: FinishOptions | null;
  /** What a call's usage costs in USD, by the run's model unless another is named (a summary's); null when the model has no price. */
  costOf: (usage: Usage, model?: string) => number | null;
  /** Where a run taken up again stands: its steps and usage so far, its clock, the calls the application approved (they run first). */
  resume?: { stepsDone: number; usageSoFar: RunUsage; clockStartedAt: number; approvedCalls: string[] };
  /** Estimated tokens → the provider's, learnt from an earlier call, and whoever keeps what this run learns. */
  tokenRatio?: number;
  onTokenRatio?: (ratio: number) => void;
  limits: { modelCallTimeoutMs: number; modelStreamIdleMs: number; graceWindowMs: number };
  /** Resolves once every event emitted so far is saved: approved calls are announced durably before they run. */
  flushEvents?: () => Promise<void>;
  /**
   * Awaited at the top of each step, before anything of it: resolves when the step may go on (the intake's: once new
   * requests are taken), at the latest after `atMostMs` or when `signal` aborts; the step is weighed after it.
   */
  beforeStep?: (options: { signal?: AbortSignal | undefined; atMostMs: number }) => Promise<void>;
  /** The run's: aborting it cancels (or, with a RunInterruption, interrupts) the run. */
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  now?: () => number;
}

/**
 * The tool-calling loop, as data: before each call the stop policy says go,
 * grace or stop; the call is prepared, made, and its answer decided into a
 * `Turn`, which one switch carries out. Every message is saved before
 * anything acts on it, so a crash loses at most the call in flight; what ends
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
  const stop = createStopPolicy({
    budget: o.budget,
    maxTokens: settings.maxTokens,
    conditions: budgetConditions(o.budget, o.costOf),
  });
  const checkFinish = o.finish ? createFinishChecker(o.finish, { signal }) : null;
  const tools = { toolBox, state, clock, signal, emit };
  const weigh = (inputTokens: number, afterTools: boolean) =>
    stop.beforeStep({
      spent: {
        steps: state.steps,
        usage: state.usage,
        costUsd: state.usage.cost_usd ?? null,
        timeLeftMs: clock.timeLeftMs(),
      },
      inputTokens,
      afterTools,
      shown: state.shown(),
      graceTurn: graceTurnOf(state.history),
    });
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
  const cancelled = () =>
    state.end(
      { status: "cancelled", stopReason: isSuperseded(signal) ? "superseded" : "cancelled" },
      { interrupted: isInterruption(signal) },
    );
  const overBudget = (over: BudgetName) =>
    state.end({ status: "incomplete", stopReason: over === "steps" ? "max_steps" : "budget", budgetExceeded: over });

  // A paused run answered: the calls the application approved run first, announced durably before they do.
  const approvedCalls = state.lastCalls().filter((call) => o.resume?.approvedCalls.includes(call.id));
  for (const call of approvedCalls)
    emit({ type: "tool_call.started", tool_call_id: call.id, name: call.name, input: call.input });
  if (approvedCalls.length > 0) await o.flushEvents?.();
  await runTools(approvedCalls, { ...tools, announced: true });
  let afterTools = state.history.at(-1)?.role === "tool"; // the approved calls', or those a crash cut off (recovery answered them)

  for (;;) {
    // New runs are taken in first (the intake's wait): the wait is part of the step, weighed with it; a cancel ends it.
    await o.beforeStep?.({ signal, atMostMs: clock.timeLeftMs() });
    if (signal?.aborted) return cancelled();
    // A crash or an earlier cancel may have left calls unanswered; answer them first.
    await state.append(repairTail(state.history));
    let gate = weigh(state.context().estimatedTokens, afterTools);
    if (gate.type === "stop") return overBudget(gate.over);
    const summarized = await summarizeIfNeeded();
    if (summarized === "cancelled") return cancelled();
    // The summary's tokens and cost are the run's, and the call is sent less: weighed again.
    if (summarized === "written" && (gate = weigh(state.context().estimatedTokens, afterTools)).type === "stop")
      return overBudget(gate.over);
    if (gate.type === "grace") await state.appendNotice(graceNotice(gate.over));
    const step = prepareStep({ state, settings, gate, clock });
    const called = await callModel(step, {
      provider,
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
      case "run_tools":
        await runTools(turn.run, tools);
        await state.append(turn.refused.map(({ call, message }) => errorResultFor(call, message)));
        if (signal?.aborted) return cancelled();
        // The application decides the rest: the run waits, holding nothing.
        if (turn.waiting.length > 0) return state.pause(turn.waiting);
        afterTools = true;
        continue;
    }
  }
}
