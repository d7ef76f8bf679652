import type { AgentEvent } from "../core/agent-events.js";
import type { NewMessage } from "../core/messages.js";
import type { ModelProvider } from "../core/model-provider.js";
import type { FinishOptions, RunBudget } from "../core/run-settings.js";
import type { RunUsage, Usage } from "../core/usage.js";
import type { ToolBox } from "../tools/tool-box.js";
import type { ModelChoice, ModelResilience } from "./call-model.js";
import type { CallSettings } from "./prepare-step.js";
import type { SaveMessages } from "../core/run-outcome.js";

/** What a run of the agent loop is given: its provider, history, tools, budgets and limits, and where it reports. */
export interface AgentRunOptions {
  provider: ModelProvider;
  /** The models a step goes on with, in order, when the run's cannot answer (`fallbacks`). */
  fallbacks?: ModelChoice[];
  /** The retry rule and the process's model circuits. @default 4 attempts from 500 ms, a circuit of the run's own */
  resilience?: ModelResilience;
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
