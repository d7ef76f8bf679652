import type { ModelCallRequest } from "../core/agent-events.js";
import type { ContextSettings } from "../core/context-settings.js";
import type { AttachmentData } from "../core/messages.js";
import type { ModelRequestBody, ToolChoice, ToolSpec } from "../core/model-provider.js";
import type { BudgetName } from "../core/run-outcome.js";
import type { RunClock } from "./run-clock.js";
import type { RunState } from "./run-state.js";
import type { StopGate } from "./stop-policy.js";

/** What a run's model calls share: settled when the run starts. */
export interface CallSettings {
  model: string;
  system: string | null;
  /** The tools offered (the tool box's specs). */
  tools: ToolSpec[];
  /** The client's choice: it binds the run's first model call only; later calls use `auto` (or stay `none`), or a forced tool would be called again forever. */
  toolChoice: ToolChoice;
  context: ContextSettings;
  fixedTokens: number;
  /** Prompt caching, keyed by this (the conversation's id); null: off. */
  cacheKey: string | null;
  /** Output tokens a call may ask for at most (config `MAX_TOKENS`); a budget may leave a call less. */
  maxTokens: number;
  /** The bytes of the attachments the history refers to, read once when the run starts. */
  attachments?: AttachmentData;
}

/** The next model call, ready to be made. */
export interface PreparedStep {
  /** Its number in the run (1 for the run's first call). */
  step: number;
  /** The grace call: tools off after a budget ran out, the run's last call. Null for any other. */
  grace: { over: BudgetName } | null;
  request: ModelRequestBody;
  /** What it was built from: the trace keeps this, not the history again. */
  record: ModelCallRequest;
  /** The context's estimate, uncalibrated: what the provider's count is compared with. */
  rawTokens: number;
  callTimeoutMs: number;
  /** Whether the time budget, not the call timeout, ends the call when its time is up. */
  boundByBudget: boolean;
}

/** What the next call is, given what the stop policy allows: its tool choice, whether it is the grace call, its context and its limits. */
export function prepareStep({
  state,
  settings,
  gate,
  clock,
}: {
  state: RunState;
  settings: CallSettings;
  gate: Exclude<StopGate, { type: "stop" }>;
  clock: RunClock;
}): PreparedStep {
  const grace = gate.type === "grace" ? { over: gate.over } : null;
  const first = state.steps === 0;
  const choice: ToolChoice =
    grace || settings.tools.length === 0
      ? "none"
      : first || settings.toolChoice === "none"
        ? settings.toolChoice
        : "auto";
  const built = state.context();
  const { model, system, tools, cacheKey, attachments } = settings;
  const request: ModelRequestBody = {
    model,
    system,
    messages: built.messages,
    tools,
    toolChoice: choice,
    maxTokens: gate.maxTokens,
    cacheKey,
    ...(attachments && { attachments }),
  };
  return {
    step: state.steps + 1,
    grace,
    request,
    record: {
      history_length: state.history.length,
      context: settings.context,
      token_ratio: state.tokenRatio,
      fixed_tokens: settings.fixedTokens,
      model,
      system,
      tools,
      tool_choice: choice,
      max_tokens: gate.maxTokens,
      max_tokens_limit: settings.maxTokens,
      cache_key: cacheKey,
    },
    rawTokens: built.rawTokens,
    callTimeoutMs: clock.callTimeoutMs({ grace: grace !== null }),
    boundByBudget: clock.boundByBudget({ grace: grace !== null }),
  };
}
