import type { ContextSettings } from "../core/context-settings.js";
import { toolCallsOf, type NewMessage, type ToolCallBlock } from "../core/messages.js";
import type { PendingToolCall, RunEnding, RunOutcome, SaveMessages, ToolCallCompletion } from "../core/run-outcome.js";
import { addUsage, emptyUsage, roundUsd, type RunUsage, type Usage } from "../core/usage.js";
import { buildContext, type BuiltContext } from "./build-context.js";
import { calibrateTokens } from "./estimate-tokens.js";
import type { StepsShown } from "./stop-policy.js";
import { CANCELLED_RESULT, INTERRUPTED_RESULT, repairTail, SUPERSEDED_CALL_RESULT } from "../core/history.js";

/**
 * A run's state as its loop goes: the history (all of it saved) and the
 * context it is sent as, the steps and usage spent, and the token ratio
 * learnt from the provider's counts.
 */
export function createRunState({
  history: given,
  save,
  context: settings,
  fixedTokens,
  stepsDone = 0,
  usageSoFar = emptyUsage(),
  costOf,
  tokenRatio: ratio = 1,
  onTokenRatio,
}: {
  /** The conversation so far, the new user message included. */
  history: readonly NewMessage[];
  save: SaveMessages;
  context: ContextSettings;
  /** What the system prompt and the tools weigh (estimated). */
  fixedTokens: number;
  stepsDone?: number;
  usageSoFar?: RunUsage;
  /** What a call's usage costs, by the run's model unless another is named (a summary's). */
  costOf: (usage: Usage, model?: string) => number | null;
  tokenRatio?: number;
  onTokenRatio?: (ratio: number) => void;
}) {
  const history = [...given];
  let steps = stepsDone;
  // A run saved before it was priced gets its cost worked out from its tokens.
  let usage: RunUsage = {
    ...usageSoFar,
    cost_usd: usageSoFar.cost_usd !== undefined ? usageSoFar.cost_usd : costOf(usageSoFar),
  };
  let tokenRatio = ratio;
  let built: { length: number; ratio: number; context: BuiltContext } | null = null;
  // What the steps showed: the last call's input (uncalibrated), the largest growth from one call's input to the next's, the longest answer.
  let lastRaw: number | null = null;
  let largestGrowth = 0;
  let largestOutput = 0;
  // The end of the history not saved yet: nothing acts on it, so it goes with the next write (the run's end, most often).
  let held: NewMessage[] = [];
  const push = (messages: NewMessage[]) => history.push(...messages);
  const addSpent = ({ cost_usd: cost = null, ...spent }: RunUsage) => {
    usage = {
      ...addUsage(usage, spent),
      cost_usd: usage.cost_usd == null || cost === null ? null : roundUsd(usage.cost_usd + cost),
    };
  };
  /** Saves what was held and `messages`, in one write. */
  async function append(messages: NewMessage[], options?: { completed?: ToolCallCompletion[] }): Promise<void> {
    if (messages.length === 0 && held.length === 0) return;
    await save([...held, ...messages], options);
    held = [];
    push(messages);
  }

  return {
    append,

    /** What was held goes with the next write instead of now: an answer whose calls only read goes with their results. */
    appendSoon: () => save(held.splice(0), { soon: true }),

    /** Messages nothing acts on before the next write: in the history now, saved with the next append or the run's end. */
    hold(messages: NewMessage[]): void {
      held.push(...messages);
      push(messages);
    },
    get history(): readonly NewMessage[] {
      return history;
    },
    get steps() {
      return steps;
    },
    get usage(): RunUsage {
      return usage;
    },
    get tokenRatio() {
      return tokenRatio;
    },
    /** A user-role message of loopd's own; not again when the history ends with it (a run resumed after a crash). */
    async appendNotice(text: string): Promise<void> {
      const last = history.at(-1);
      if (
        last?.role === "user" &&
        last.kind === "notice" &&
        last.content.some((b) => b.type === "text" && b.text === text)
      )
        return;
      await append([{ role: "user", kind: "notice", content: [{ type: "text", text }] }]);
    },

    /** The context the next call is sent, built once per state of the history. */
    context(): BuiltContext {
      if (built?.length !== history.length || built.ratio !== tokenRatio) {
        built = {
          length: history.length,
          ratio: tokenRatio,
          context: buildContext({ history, settings, fixedTokens, tokenRatio }),
        };
      }
      return built.context;
    },

    /** A model call was made: it counts as a step; what it was sent (`rawTokens`, the context's uncalibrated estimate) and answered teaches `shown`. */
    countStep({ rawTokens, outputTokens }: { rawTokens: number; outputTokens: number }): number {
      if (lastRaw !== null) largestGrowth = Math.max(largestGrowth, rawTokens - lastRaw);
      lastRaw = rawTokens;
      largestOutput = Math.max(largestOutput, outputTokens);
      return ++steps;
    },

    /**
     * What this run's steps have shown (since it was taken up, when it was):
     * the most a step added to the next call's input, the step that just
     * ended included, in calibrated tokens; and the longest answer. Null
     * before the first.
     */
    shown(): StepsShown | null {
      if (lastRaw === null) return null;
      const growth = Math.max(largestGrowth, this.context().rawTokens - lastRaw);
      return { growth: Math.ceil(growth * tokenRatio), output: largestOutput };
    },

    /** Adds a call's usage, and its cost, to the run's; returns the call's cost. `model`: the call's, when not the run's. */
    spend(used: Usage, model?: string): number | null {
      const cost = costOf(used, model);
      addSpent({ ...used, cost_usd: cost });
      return cost;
    },
    /** Adds what a call spent of its own (a child run's tokens and cost): the run's budget counts them. */
    addSpent,
    /** What the provider counted for a request teaches the estimate of the next. */
    learnTokens({ counted, estimated }: { counted: number; estimated: number }): void {
      if (counted <= 0) return;
      tokenRatio = calibrateTokens({ reported: counted, estimated });
      onTokenRatio?.(tokenRatio);
    },

    /** Whether the finish nudge was given since the user last wrote. */
    nudgedSinceUser(nudge: string): boolean {
      for (let i = history.length - 1; i >= 0; i--) {
        const m = history[i]!;
        if (m.role !== "user") continue;
        if (m.kind !== "notice") return false;
        if (m.content.some((b) => b.type === "text" && b.text === nudge)) return true;
      }
      return false;
    },

    /** The calls of the last assistant message. */
    lastCalls(): ToolCallBlock[] {
      for (let i = history.length - 1; i >= 0; i--)
        if (history[i]!.role === "assistant") return toolCallsOf(history[i]!);
      return [];
    },

    /** The run waits for the application: its pending calls stay unanswered (their answers will come), nothing is repaired. */
    async pause(pending: PendingToolCall[]): Promise<RunOutcome> {
      await append([]);
      return { status: "requires_action", stopReason: null, pending, steps, usage, history };
    },

    /**
     * Ends the run: any call left unanswered gets its result first (cancelled,
     * or interrupted when the process stopped it), so the history stays valid.
     * What is still held is the outcome's `unsaved`, for the write of the end
     * (a run interrupted records no end here: it saves everything now).
     */
    async end(ending: RunEnding, { interrupted = false }: { interrupted?: boolean } = {}): Promise<RunOutcome> {
      const repair = repairTail(
        history,
        interrupted
          ? INTERRUPTED_RESULT
          : ending.stopReason === "superseded"
            ? SUPERSEDED_CALL_RESULT
            : ending.status === "cancelled"
              ? CANCELLED_RESULT
              : INTERRUPTED_RESULT,
      );
      if (repair.length > 0 || interrupted) await append(repair);
      const unsaved = held;
      held = [];
      return { ...ending, steps, usage, history, unsaved };
    },
  };
}

export type RunState = ReturnType<typeof createRunState>;
