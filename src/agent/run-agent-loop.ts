import { executeToolCalls } from "../tools/execute-tool-calls.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import type { AgentEvent } from "./agent-events.js";
import type { PendingToolCall, ToolAction } from "./decide-tool-action.js";
import { startModelCallDeadline } from "./model-call-deadline.js";
import { addUsage, emptyUsage, toolCallsOf, type NewMessage, type ToolCallBlock, type Usage } from "./messages.js";
import type { ModelProvider, ModelResponse, ToolChoice, ToolSpec } from "./model.js";
import { nextStep, type RunStopReason } from "./next-step.js";
import { CANCELLED_RESULT, errorResultFor, INTERRUPTED_RESULT, repairTail } from "./repair-history.js";
import { isInterruption } from "./run-interruption.js";

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
   * Applies to the first model call only; later calls use `auto` (or stay
   * `none`), or a forced tool would be called again forever.
   * @default "auto"
   */
  toolChoice?: ToolChoice;
  maxSteps: number;
  maxTokens: number;
  workspaceDir: string;
  toolTimeoutMs: number;
  /** How many read-only tool calls may run at once (config `TOOL_CONCURRENCY`). @default 8 */
  toolConcurrency?: number;
  /** Model calls already made by this run (a run resumed after a crash). @default 0 */
  stepsDone?: number;
  /** Usage already spent by this run. */
  usageSoFar?: Usage;
  /** The most one model call may take; past it the run fails with a provider error. @default 600000 */
  modelCallTimeoutMs?: number;
  /** The most a model call may go without streaming any part of the answer; past it the run fails with a provider error. @default 60000 */
  modelStreamIdleMs?: number;
  /** The run's: aborting it cancels (or, with a RunInterruption, interrupts) the run. */
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  now?: () => number;
}

/** A tool call's end, as its `tool_call.completed` event tells it. */
export interface ToolCallCompletion {
  tool_call_id: string;
  name: string;
  is_error: boolean;
  duration_ms: number;
}

export interface AgentRunResult {
  status: "completed" | "incomplete" | "failed" | "cancelled" | "requires_action";
  /** Null while the run waits for the application. */
  stopReason: RunStopReason | null;
  steps: number;
  usage: Usage;
  error: { code: string; message: string } | null;
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
  let steps = options.stepsDone ?? 0;
  let usage = options.usageSoFar ?? emptyUsage();
  let toolChoice = options.toolChoice ?? "auto";
  const tools = [...registry.specs(allowedTools.filter((name) => registry.has(name))), ...(options.clientTools ?? [])];
  const decideAction = options.decideAction ?? (() => "run");

  const append = async (messages: NewMessage[], options?: { completed?: ToolCallCompletion[] }) => {
    if (messages.length === 0) return;
    await save(messages, options);
    history.push(...messages);
  };
  const end = async (
    status: AgentRunResult["status"],
    stopReason: RunStopReason,
    error: AgentRunResult["error"] = null,
  ): Promise<AgentRunResult> => {
    await append(repairTail(history, status === "cancelled" && !isInterruption(signal) ? CANCELLED_RESULT : INTERRUPTED_RESULT));
    return { status, stopReason, steps, usage, error, history };
  };

  if (options.approvedCalls?.length) {
    const approved = new Set(options.approvedCalls);
    await runTools(lastCalls(history).filter((call) => approved.has(call.id)));
  }

  for (;;) {
    if (signal?.aborted) return end("cancelled", "cancelled");
    // A crash or an earlier cancel may have left calls unanswered; answer them first.
    await append(repairTail(history));
    if (steps >= maxSteps) return end("incomplete", "max_steps");

    const started = now();
    const step = steps + 1;
    const deadline = startModelCallDeadline({ signal, callTimeoutMs: options.modelCallTimeoutMs, idleMs: options.modelStreamIdleMs });
    let response: ModelResponse;
    try {
      response = await provider.generate({
        model,
        system,
        messages: history,
        tools,
        toolChoice: tools.length === 0 ? "none" : toolChoice,
        maxTokens,
        signal: deadline.signal,
        onTextDelta: (delta) => emit({ type: "text.delta", delta }),
        onProgress: deadline.onProgress,
      });
    } catch (thrown) {
      if (signal?.aborted) return end("cancelled", "cancelled");
      // A passed deadline aborts the call: the provider then throws an AbortError, but the run was not cancelled.
      const err = deadline.expired() ?? thrown;
      const message = err instanceof Error ? err.message : String(err);
      const status = typeof (err as { status?: unknown }).status === "number" ? (err as { status: number }).status : null;
      emit({ type: "model_call.failed", step, provider: provider.name, model, error: message, status, duration_ms: now() - started });
      return end("failed", "error", { code: "provider_error", message });
    } finally {
      deadline.dispose();
    }
    steps = step;
    usage = addUsage(usage, response.usage);
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
    });
    // Saved before any tool runs: the calls are on record even if we crash now.
    if (response.content.length > 0) await append([{ role: "assistant", content: response.content }]);
    if (toolChoice !== "none") toolChoice = "auto";

    const next = nextStep(response);
    switch (next.type) {
      case "call_model_again":
        continue;
      case "finish":
        await append(next.unexecuted.map((call) => errorResultFor(call, notExecuted(next.stopReason))));
        return end(next.status, next.stopReason);
      case "run_tools": {
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

  async function runTools(calls: ToolCallBlock[]) {
    const outcomes = executeToolCalls({
      calls,
      registry,
      allowed: allowedTools,
      workspaceDir: options.workspaceDir,
      defaultTimeoutMs: options.toolTimeoutMs,
      concurrency: options.toolConcurrency,
      signal,
      now,
      onStart: (call) => emit({ type: "tool_call.started", tool_call_id: call.id, name: call.name, input: call.input }),
    });
    for await (const outcome of outcomes) {
      const { call, durationMs, status } = outcome;
      // A call cut short by a shutdown was not cancelled by anyone: say so, for the model that resumes.
      const result = status === "cancelled" && isInterruption(signal) ? { ...outcome.result, content: INTERRUPTED_RESULT } : outcome.result;
      await append([{ role: "tool", content: [result] }], {
        completed: [{ tool_call_id: call.id, name: call.name, is_error: result.is_error, duration_ms: durationMs }],
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
  }
}

/** The calls of the last assistant message. */
function lastCalls(history: readonly NewMessage[]): ToolCallBlock[] {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!.role === "assistant") return toolCallsOf(history[i]!);
  return [];
}

function notExecuted(stopReason: RunStopReason): string {
  return `tool call was not executed: the response stopped early (${stopReason}), so its arguments may be incomplete`;
}
