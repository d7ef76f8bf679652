import { executeToolCalls } from "../tools/execute-tool-calls.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import { linkedAbort } from "../linked-abort.js";
import type { AgentEvent } from "../core/agent-events.js";
import { buildContext } from "./build-context.js";
import { DEFAULT_CONTEXT, type ContextSettings } from "../core/context-settings.js";
import { calibrateTokens, estimateFixedTokens } from "./estimate-tokens.js";
import { createFinishChecker, FINISH_NUDGE } from "./finish-tool.js";
import { type RunResult } from "../core/run-outcome.js";
import { FINISH_TOOL, type FinishOptions } from "../core/run-settings.js";
import { offeredTools } from "./offered-tools.js";
import { exceededBudget, graceNotice, TIME_BUDGET_RESULT, type BudgetSpent } from "./budget.js";
import { type BudgetName } from "../core/run-outcome.js";
import { type RunBudget } from "../core/run-settings.js";
import { totalTokens } from "../core/usage.js";
import type { PendingToolCall, ToolAction } from "../core/run-outcome.js";
import { startModelCallDeadline } from "./model-call-deadline.js";
import { sendable, toolCallsOf, type NewMessage, type ToolCallBlock } from "../core/messages.js";
import { addUsage, emptyUsage, roundUsd, type RunUsage, type Usage } from "../core/usage.js";
import type { ModelProvider, ModelResponse, ToolChoice, ToolSpec } from "../core/model-provider.js";
import { nextStep } from "./next-step.js";
import { type RunStopReason } from "../core/run-outcome.js";
import { CANCELLED_RESULT, errorResultFor, INTERRUPTED_RESULT, repairTail } from "./repair-history.js";
import { isInterruption } from "../core/interruptions.js";

export interface AgentRunOptions {
  provider: ModelProvider;
  model: string;
  system: string | null;
  /** The conversation so far, the new user message included, all of it already saved. */
  history: NewMessage[];
  /**
   * Commits messages at the end of the history; resolves once they are
   * durable. `completed` announces the tool calls whose results they hold,
   * in the same write.
   */
  save: (messages: NewMessage[], options?: { completed?: ToolCallCompletion[] }) => Promise<void>;
  registry: ToolRegistry;
  /** Tool names this conversation may use. */
  allowedTools: string[];
  /** Tools the client executes: offered to the model, never run here. @default [] */
  clientTools?: ToolSpec[];
  /**
   * Whether a proposed call runs now or waits for the application (approval,
   * or a client tool's output); calls that wait pause the run once the others
   * of their step are done. @default every call runs
   */
  decideAction?: (call: ToolCallBlock) => ToolAction;
  /**
   * Calls of the last step that the application approved (a paused run
   * answered): they run first, before anything else. Their results are the
   * only ones the history still lacks. @default []
   */
  approvedCalls?: string[];
  /**
   * Resolves once every event emitted so far is saved: approved calls are
   * announced (`tool_call.started`) durably before they run, so a process
   * that takes the run over knows which of them never began.
   */
  flushEvents?: () => Promise<void>;
  /**
   * Applies to the first model call only; later calls use `auto` (or stay
   * `none`), or a forced tool would be called again forever.
   * @default "auto"
   */
  toolChoice?: ToolChoice;
  maxSteps: number;
  /**
   * The run's other limits, and whether a grace turn answers for it when one
   * runs out. `max_steps` here is ignored: `maxSteps` counts.
   * @default no limit but `maxSteps`, with a grace turn
   */
  budget?: Omit<RunBudget, "max_steps">;
  /** When the run's clock started (ms since the epoch, time spent paused added back): `max_seconds` counts from there. @default now */
  clockStartedAt?: number;
  /** The run ends with a `finish` call (offered as a tool); a plain answer gets one nudge first. @default off */
  finish?: FinishOptions | null;
  /** What a model call's usage costs in USD; null when the model has no price. @default no price */
  costOf?: (usage: Usage) => number | null;
  maxTokens: number;
  /** How each call's context is built from the history. @default the whole history (`full`) */
  context?: ContextSettings;
  /** Prompt caching, keyed by this (the conversation's id). @default null: off */
  cacheKey?: string | null;
  /** Estimated tokens → the provider's, learnt from an earlier call (see `calibrateTokens`). @default 1 */
  tokenRatio?: number;
  /** Hears the ratio learnt from each model call. */
  onTokenRatio?: (ratio: number) => void;
  workspaceDir: string;
  toolTimeoutMs: number;
  /** How many read-only tool calls may run at once (config `TOOL_CONCURRENCY`). @default 8 */
  toolConcurrency?: number;
  /** Results of tools without a cap of their own are clipped past this (config `TOOL_RESULT_MAX_CHARS`). @default 16384 */
  toolResultMaxChars?: number;
  /** Model calls already made by this run (a run resumed after a crash). @default 0 */
  stepsDone?: number;
  /** Usage already spent by this run (with its cost, once priced). */
  usageSoFar?: RunUsage;
  /** The most one model call may take; past it the run fails with a provider error. @default 600000 */
  modelCallTimeoutMs?: number;
  /** The most a model call may go without streaming any part of the answer; past it the run fails with a provider error. @default 60000 */
  modelStreamIdleMs?: number;
  /** The run's: aborting it cancels (or, with a RunInterruption, interrupts) the run. */
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  now?: () => number;
}

import type { ToolCallCompletion } from "../core/run-outcome.js";

export interface AgentRunResult {
  status: "completed" | "incomplete" | "failed" | "cancelled" | "requires_action";
  /** Null while the run waits for the application. */
  stopReason: RunStopReason | null;
  steps: number;
  usage: RunUsage;
  error: { code: string; message: string } | null;
  /** Which budget ended the run, when one did. */
  budgetExceeded?: BudgetName | null;
  /** What a valid `finish` call reported. */
  result?: RunResult | null;
  /** The history as it stands at the end, everything in it saved. */
  history?: NewMessage[];
  /** What the run waits on, when it paused (`requires_action`). */
  pending?: PendingToolCall[];
}

/**
 * The tool-calling loop: call the model, save its answer, run its tool calls
 * and save each result, until the model answers or a limit stops the run.
 * Every message is saved the moment it exists, so a crash loses at most the
 * call in flight; the history handed to the model never has an orphan call.
 */
export async function runAgentLoop(options: AgentRunOptions): Promise<AgentRunResult> {
  const { provider, model, system, save, registry, allowedTools, maxSteps, maxTokens, signal, now = Date.now } = options;
  const emit = options.onEvent ?? (() => {});
  const history = [...options.history];
  // The history without refused turns. Only a loaded history can hold one,
  // so it is filtered once here and then grows with it; each call's context
  // is built from it.
  const context = sendable(history);
  let steps = options.stepsDone ?? 0;
  const costOf = options.costOf ?? (() => null);
  const usedBefore: RunUsage = options.usageSoFar ?? emptyUsage();
  // A run saved before it was priced gets its cost worked out from its tokens.
  let usage: RunUsage = { ...usedBefore, cost_usd: usedBefore.cost_usd !== undefined ? usedBefore.cost_usd : costOf(usedBefore) };
  const budget: RunBudget = { max_tokens: null, max_seconds: null, max_cost_usd: null, grace_turn: true, ...options.budget, max_steps: maxSteps };
  const clockStartedAt = options.clockStartedAt ?? now();
  const timeLeftMs = () => (budget.max_seconds === null ? Infinity : clockStartedAt + budget.max_seconds * 1000 - now());
  let toolChoice = options.toolChoice ?? "auto";
  const finish = options.finish ?? null;
  const tools = offeredTools({ registry, allowedTools, clientTools: options.clientTools, finish });
  const contextSettings = options.context ?? DEFAULT_CONTEXT;
  const fixedTokens = estimateFixedTokens({ system, tools });
  let tokenRatio = options.tokenRatio ?? 1;
  const checkFinish = finish ? createFinishChecker(finish) : null;
  const decideAction = options.decideAction ?? (() => "run");

  const append = async (messages: NewMessage[], options?: { completed?: ToolCallCompletion[] }) => {
    if (messages.length === 0) return;
    await save(messages, options);
    history.push(...messages);
    if (context !== history) context.push(...messages);
  };
  const end = async (
    status: AgentRunResult["status"],
    stopReason: RunStopReason,
    error: AgentRunResult["error"] = null,
    budgetExceeded: BudgetName | null = null,
    result: RunResult | null = null,
  ): Promise<AgentRunResult> => {
    await append(repairTail(history, status === "cancelled" && !isInterruption(signal) ? CANCELLED_RESULT : INTERRUPTED_RESULT));
    return { status, stopReason, steps, usage, error, history, budgetExceeded, result };
  };
  const endOver = (over: BudgetName) => end("incomplete", over === "steps" ? "max_steps" : "budget", null, over);

  /** Calls the model once; a failure or a cancel ends the run (returned as its result). */
  const callModel = async (choice: ToolChoice): Promise<ModelResponse | AgentRunResult> => {
    const started = now();
    const step = steps + 1;
    let streamedChars = 0;
    let reported: Usage | null = null;
    // The run's time budget bounds the call too (the grace call excepted: it runs on the time that is left over).
    const budgetMs = choice === "none" && budget.max_seconds !== null && timeLeftMs() <= 0 ? Infinity : timeLeftMs();
    const callTimeoutMs = Math.min(options.modelCallTimeoutMs ?? 600_000, budgetMs);
    const deadline = startModelCallDeadline({ signal, callTimeoutMs, idleMs: options.modelStreamIdleMs });
    const built = buildContext({ history: context, settings: contextSettings, fixedTokens, tokenRatio });
    const toolChoiceSent = tools.length === 0 ? "none" : choice;
    const sent = {
      request: {
        history_length: history.length,
        context: contextSettings,
        token_ratio: tokenRatio,
        fixed_tokens: fixedTokens,
        model,
        system,
        tools,
        tool_choice: toolChoiceSent,
        max_tokens: maxTokens,
        cache_key: options.cacheKey ?? null,
      },
      body: null as object | null,
      started_at: started,
    };
    let firstPartAt: number | null = null;
    let response: ModelResponse;
    try {
      response = await provider.generate({
        model,
        system,
        messages: built.messages,
        cacheKey: options.cacheKey ?? null,
        tools,
        toolChoice: toolChoiceSent,
        maxTokens,
        signal: deadline.signal,
        onTextDelta: (delta) => {
          firstPartAt ??= now();
          streamedChars += delta.length;
          emit({ type: "text.delta", delta });
        },
        onProgress: () => {
          firstPartAt ??= now();
          deadline.onProgress();
        },
        onUsage: (u) => (reported = u),
        onRequest: (body) => (sent.body = body),
      });
    } catch (thrown) {
      // Cut off mid-answer, the call is still billed: what the provider reported so far counts, or at least what it streamed.
      const partial: Usage = { ...(reported ?? emptyUsage()) };
      partial.output_tokens = Math.max(partial.output_tokens, Math.ceil(streamedChars / CHARS_PER_TOKEN));
      if (totalTokens(partial) > 0) spend(partial);
      if (signal?.aborted) return end("cancelled", "cancelled");
      // A passed deadline aborts the call: the provider then throws an AbortError, but the run was not cancelled.
      const expired = deadline.expired();
      if (expired && budgetMs <= callTimeoutMs && timeLeftMs() <= 0) return endOver("seconds");
      const err = expired ?? thrown;
      const message = err instanceof Error ? err.message : String(err);
      const status = typeof (err as { status?: unknown }).status === "number" ? (err as { status: number }).status : null;
      emit({ type: "model_call.failed", step, provider: provider.name, model, error: message, status, duration_ms: now() - started, ...sent });
      return end("failed", "error", { code: "provider_error", message });
    } finally {
      deadline.dispose();
    }
    steps = step;
    const cost = spend(response.usage);
    // What the provider counted for this request teaches the estimate of the next.
    const { input_tokens, cache_read_tokens, cache_write_tokens } = response.usage;
    const counted = input_tokens + cache_read_tokens + cache_write_tokens;
    if (counted > 0) options.onTokenRatio?.((tokenRatio = calibrateTokens({ reported: counted, estimated: built.rawTokens })));
    emit({
      type: "model_call.finished",
      step,
      provider: provider.name,
      model: response.model || model,
      stop_reason: response.stopReason,
      raw_stop_reason: response.rawStopReason,
      usage: response.usage,
      run_steps: steps,
      run_usage: usage,
      duration_ms: now() - started,
      content: response.content,
      request_id: response.requestId ?? null,
      ttft_ms: firstPartAt === null ? null : firstPartAt - started,
      cost_usd: cost,
      ...sent,
    });
    // Saved before any tool runs: the calls are on record even if we crash now.
    if (response.content.length > 0) await append([{ role: "assistant", content: response.content }]);
    return response;
  };

  /**
   * A budget ran out while the model still wants tools: a notice says so,
   * and one last call with tools disabled (still declared, so the history
   * stays valid) lets the model answer with what it has.
   */
  const graceTurn = async (over: BudgetName): Promise<AgentRunResult> => {
    const last = history.at(-1);
    const notice = graceNotice(over);
    // A run resumed after a crash may have said so already.
    if (!(last?.role === "user" && last.kind === "notice" && last.content.some((b) => b.text === notice))) {
      await append([{ role: "user", kind: "notice", content: [{ type: "text", text: notice }] }]);
    }
    const response = await callModel("none");
    if (!("content" in response)) return response;
    const calls = response.content.filter((b): b is ToolCallBlock => b.type === "tool_call");
    await append(calls.map((call) => errorResultFor(call, "tool call was not executed: the run's budget ran out")));
    return endOver(over);
  };

  /** Adds a call's usage, and its cost, to the run's; returns the call's cost. */
  function spend(used: Usage): number | null {
    const cost = costOf(used);
    usage = { ...addUsage(usage, used), cost_usd: usage.cost_usd == null || cost === null ? null : roundUsd(usage.cost_usd + cost) };
    return cost;
  }

  const spent = (): BudgetSpent => ({ steps, usage, costUsd: usage.cost_usd ?? null, elapsedMs: now() - clockStartedAt });

  if (options.approvedCalls?.length) {
    const approved = new Set(options.approvedCalls);
    const calls = lastCalls(history).filter((call) => approved.has(call.id));
    for (const call of calls) emit({ type: "tool_call.started", tool_call_id: call.id, name: call.name, input: call.input });
    await options.flushEvents?.();
    await runTools(calls, { announced: true });
  }

  for (;;) {
    if (signal?.aborted) return end("cancelled", "cancelled");
    // A crash or an earlier cancel may have left calls unanswered; answer them first.
    await append(repairTail(history));
    // Checked after every model call and every batch of tool results: here,
    // before the next call (an answer without tools ends the run anyway).
    if (steps > 0) {
      const over = exceededBudget(budget, spent());
      if (over) return budget.grace_turn && steps < maxSteps ? graceTurn(over) : endOver(over);
    }

    const response = await callModel(toolChoice);
    if (!("content" in response)) return response;
    if (toolChoice !== "none") toolChoice = "auto";

    const next = nextStep(response);
    switch (next.type) {
      case "call_model_again":
        continue;
      case "finish":
        await append(next.unexecuted.map((call) => errorResultFor(call, notExecuted(next.stopReason))));
        // Asked to finish with a call, the model answered in text: one nudge, then its next plain answer ends the run.
        if (finish && next.status === "completed" && !nudgedSinceUser(history)) {
          await append([{ role: "user", kind: "notice", content: [{ type: "text", text: FINISH_NUDGE }] }]);
          continue;
        }
        return end(next.status, next.stopReason);
      case "run_tools": {
        if (checkFinish && next.calls.some((call) => call.name === FINISH_TOOL)) {
          const done = await finishCalls(next.calls, checkFinish);
          if (done) return done;
          continue;
        }
        const actions = next.calls.map(decideAction);
        await runTools(next.calls.filter((_, i) => actions[i] === "run"));
        if (signal?.aborted) return end("cancelled", "cancelled");
        const pending = next.calls.flatMap((call, i): PendingToolCall[] => {
          const action = actions[i]!;
          return action === "run" ? [] : [{ tool_call_id: call.id, name: call.name, input: call.input, action }];
        });
        // The application decides the rest: the run waits, holding nothing.
        if (pending.length > 0) return { status: "requires_action", stopReason: null, steps, usage, error: null, history, pending };
        continue;
      }
    }
  }

  /**
   * A step with `finish` calls: the first valid one ends the run (its call
   * answered, the step's other calls not executed); with none valid, the
   * other calls run and each `finish` gets an error naming what was wrong.
   */
  async function finishCalls(calls: ToolCallBlock[], check: NonNullable<typeof checkFinish>): Promise<AgentRunResult | null> {
    const checked = calls.map((call) => ({ call, verdict: call.name === FINISH_TOOL ? check(call.input) : null }));
    const valid = checked.find((c) => c.verdict?.ok === true);
    if (valid && valid.verdict?.ok) {
      const result = valid.verdict.result;
      await append(
        calls.map((call) =>
          call === valid.call
            ? { role: "tool", content: [{ type: "tool_result", tool_call_id: call.id, name: call.name, content: "Finished.", is_error: false }] }
            : errorResultFor(call, "tool call was not executed: the run finished"),
        ),
      );
      return end("completed", "finish", null, null, result);
    }
    await runTools(calls.filter((call) => call.name !== FINISH_TOOL));
    await append(checked.flatMap(({ call, verdict }) => (verdict && !verdict.ok ? [errorResultFor(call, verdict.message)] : [])));
    return signal?.aborted ? end("cancelled", "cancelled") : null;
  }

  async function runTools(calls: ToolCallBlock[], { announced = false }: { announced?: boolean } = {}) {
    // The run's time budget stops a call in flight at its deadline.
    const timeLeft = timeLeftMs();
    const outOfTime = Number.isFinite(timeLeft) ? AbortSignal.timeout(Math.max(0, timeLeft)) : undefined;
    const toolSignal = outOfTime ? linkedAbort(outOfTime, ...(signal ? [signal] : [])) : undefined;
    try {
    const outcomes = executeToolCalls({
      calls,
      registry,
      allowed: allowedTools,
      workspaceDir: options.workspaceDir,
      defaultTimeoutMs: options.toolTimeoutMs,
      concurrency: options.toolConcurrency,
      maxResultChars: options.toolResultMaxChars,
      signal: toolSignal?.signal ?? signal,
      now,
      onStart: announced ? undefined : (call) => emit({ type: "tool_call.started", tool_call_id: call.id, name: call.name, input: call.input }),
    });
    for await (const outcome of outcomes) {
      const { call, durationMs, status } = outcome;
      // A call cut short by a shutdown was not cancelled by anyone: say so, for the model that resumes.
      const stoppedBy = status !== "cancelled" ? null : isInterruption(signal) ? INTERRUPTED_RESULT : !signal?.aborted && outOfTime?.aborted ? TIME_BUDGET_RESULT : null;
      const result = stoppedBy ? { ...outcome.result, content: stoppedBy } : outcome.result;
      await append([{ role: "tool", content: [result] }], {
        completed: [{ tool_call_id: call.id, name: call.name, is_error: result.is_error, duration_ms: durationMs, status }],
      });
      emit({
        type: "tool_call.completed",
        tool_call_id: call.id,
        name: call.name,
        input: call.input,
        is_error: result.is_error,
        content: result.content,
        duration_ms: durationMs,
        status,
      });
    }
    } finally {
      toolSignal?.dispose();
    }
  }
}

/** A rough count of tokens in streamed text, for a call cut off before the provider said how many. */
const CHARS_PER_TOKEN = 4;

/** Whether the finish nudge was given since the user last wrote. */
function nudgedSinceUser(history: readonly NewMessage[]): boolean {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role !== "user") continue;
    if (m.kind !== "notice") return false;
    if (m.content.some((b) => b.text === FINISH_NUDGE)) return true;
  }
  return false;
}

/** The calls of the last assistant message. */
function lastCalls(history: readonly NewMessage[]): ToolCallBlock[] {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!.role === "assistant") return toolCallsOf(history[i]!);
  return [];
}

function notExecuted(stopReason: RunStopReason): string {
  return `tool call was not executed: the response stopped early (${stopReason}), so its arguments may be incomplete`;
}
