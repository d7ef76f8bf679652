import type { AgentEvent } from "../core/agent-events.js";
import type { ModelProvider, ModelRequestBody, ModelResponse } from "../core/model-provider.js";
import { emptyUsage, totalTokens, type Usage } from "../core/usage.js";
import { estimateTextTokens } from "./estimate-tokens.js";
import { startModelCallDeadline } from "./model-call-deadline.js";
import { planSummary, SUMMARY_SHARE } from "./plan-summary.js";
import type { CallSettings } from "./prepare-step.js";
import type { RunClock } from "./run-clock.js";
import type { RunState } from "./run-state.js";
import { SUMMARY_SYSTEM, summaryRequestText } from "./summary-prompt.js";
import type { RunBudget } from "../core/run-settings.js";
import { budgetConditions } from "./budget-conditions.js";
import { roomForCall } from "./stop-policy.js";

/** The fewest output tokens a summary call is given. */
const MIN_SUMMARY_TOKENS = 256;

/** The transcript a summary call is shown is at most this many characters per token of the input limit: about two thirds of the limit, whatever the text, so the call itself fits. */
const TRANSCRIPT_CHARS_PER_TOKEN = 2.5;

/**
 * Context `summarize`: before a call whose context would pass
 * `max_input_tokens`, one model call condenses the oldest exchanges (and
 * the summary before, if any) into a `summary` message saved at the end of
 * the history, which later calls are sent in their place. Its tokens and
 * cost are the run's (not a step). A summary call that fails leaves the
 * exchanges to the cut of `trim` (left out), says so in the trace, and is
 * not tried again in this run; the run goes on either way.
 */
export function createSummarizer({
  provider,
  settings,
  state,
  clock,
  signal,
  idleMs,
  emit,
  now,
  budget,
  costOf,
}: {
  provider: ModelProvider;
  settings: CallSettings;
  state: RunState;
  clock: RunClock;
  signal: AbortSignal | undefined;
  idleMs: number | undefined;
  emit: (event: AgentEvent) => void;
  now: () => number;
  /** The run's budgets: a summary call is weighed like a step, at its own model's price, its answer capped by what is left, and not made without room (the exchanges are then left out). */
  budget: RunBudget;
  /** What a call's usage costs, by the run's model unless another is named. */
  costOf: (usage: Usage, model?: string) => number | null;
}) {
  let failed = false;

  /** Writes the summary the next call needs, if it needs one: "written" when it did, "cancelled" when the run was cancelled meanwhile. */
  return async function summarizeIfNeeded(): Promise<"written" | "cancelled" | null> {
    if (failed) return null;
    const plan = planSummary({
      history: state.history,
      settings: settings.context,
      built: state.context(),
      tokenRatio: state.tokenRatio,
    });
    if (plan === null) return null;
    const limit = settings.context.max_input_tokens!;
    const wanted = Math.min(settings.maxTokens, Math.max(MIN_SUMMARY_TOKENS, Math.floor(limit * SUMMARY_SHARE)));
    const model = settings.context.summary_model ?? settings.model;
    const textFor = (maxTokens: number) =>
      summaryRequestText(plan, {
        maxWords: Math.floor(maxTokens * 0.6),
        maxChars: Math.floor(limit * TRANSCRIPT_CHARS_PER_TOKEN),
      });
    const room = roomForCall({
      budget,
      maxTokens: settings.maxTokens,
      // The grace call it leaves room for is the run's model's.
      conditions: budgetConditions(budget, (u) => costOf(u, model), { reserveCostOf: (u) => costOf(u) }),
      spent: {
        steps: state.steps,
        usage: state.usage,
        costUsd: state.usage.cost_usd ?? null,
        timeLeftMs: clock.timeLeftMs(),
      },
      inputTokens: Math.ceil(
        (estimateTextTokens(SUMMARY_SYSTEM) + estimateTextTokens(textFor(wanted))) * state.tokenRatio,
      ),
      shown: state.shown(),
    });
    if (room === null) return null;
    // Within what the budgets leave (asking for fewer words only shortens the request).
    const maxTokens = Math.min(wanted, room);
    const text = textFor(maxTokens);
    const request: ModelRequestBody = {
      model,
      system: SUMMARY_SYSTEM,
      messages: [{ role: "user", content: [{ type: "text", text }] }],
      tools: [],
      toolChoice: "none",
      maxTokens,
      cacheKey: null,
    };
    const started = now();
    let body: object | null = null;
    let reported: Usage | null = null;
    const summarizes = { from_seq: plan.from_seq, to_seq: plan.to_seq };
    const report = (fields: {
      summary_seq: number | null;
      answer: string | null;
      error: string | null;
      usage: Usage | null;
      cost_usd: number | null;
    }) =>
      emit({
        type: "context.summary",
        provider: provider.name,
        model,
        summarizes,
        ...fields,
        run_steps: state.steps,
        run_usage: state.usage,
        started_at: started,
        duration_ms: now() - started,
        body,
      });
    const deadline = startModelCallDeadline({ signal, callTimeoutMs: clock.callTimeoutMs({ grace: false }), idleMs });
    let response: ModelResponse;
    try {
      response = await provider.generate({
        ...request,
        signal: deadline.signal,
        onProgress: deadline.onProgress,
        onUsage: (u) => (reported = u),
        onRequest: (b) => (body = b),
      });
    } catch (thrown) {
      const partial: Usage = reported ?? emptyUsage();
      const cost = totalTokens(partial) > 0 ? state.spend(partial, model) : null;
      if (signal?.aborted) return "cancelled";
      failed = true;
      const err = deadline.expired() ?? thrown;
      const message = err instanceof Error ? err.message : String(err);
      report({
        summary_seq: null,
        answer: null,
        error: `the summary call failed (${message}); the exchanges were left out instead`,
        usage: reported,
        cost_usd: cost,
      });
      return null;
    } finally {
      deadline.dispose();
    }
    const cost = state.spend(response.usage, model);
    const answer = response.content
      .flatMap((b) => (b.type === "text" ? [b.text] : []))
      .join("\n")
      .trim();
    if (answer === "") {
      failed = true;
      report({
        summary_seq: null,
        answer: null,
        error: "the summary call answered with no text; the exchanges were left out instead",
        usage: response.usage,
        cost_usd: cost,
      });
      return null;
    }
    // The span goes with the save of the summary it tells.
    report({ summary_seq: state.history.length + 1, answer, error: null, usage: response.usage, cost_usd: cost });
    await state.append([{ role: "user", kind: "summary", summarizes, content: [{ type: "text", text: answer }] }]);
    return "written";
  };
}
