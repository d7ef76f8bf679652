import type { AgentEvent } from "../core/agent-events.js";
import type { AttachmentData, NewMessage } from "../core/messages.js";
import { DEFAULT_CONTEXT } from "../core/context-settings.js";
import type { ProviderName } from "../core/model-provider.js";
import type { AgentRunOptions } from "../agent/agent-run-options.js";
import type { Services } from "../services.js";
import type { ConversationRow } from "../store/schema.js";
import type { ToolBox } from "../tools/tool-box.js";
import type { RunWriter } from "./run-writer.js";
import type { RunStart } from "./start-run.js";

/** The loop's options for a run starting here: its settings, its budget, where it stands, and what it writes through. */
export function loopOptionsOf({
  services,
  start,
  conversation,
  history,
  attachments,
  toolBox,
  writer,
  signal,
  onEvent,
}: {
  services: Services;
  start: RunStart;
  conversation: ConversationRow;
  history: NewMessage[];
  attachments: AttachmentData;
  toolBox: ToolBox;
  writer: RunWriter;
  signal: AbortSignal;
  onEvent: (e: AgentEvent) => void;
}): AgentRunOptions {
  const { config } = services;
  const { run } = start;
  const finish = run.request.finish ?? null;
  const approvedCalls = start.kind === "answered" || start.kind === "recovered" ? start.approvedCalls : [];
  return {
    provider: services.providers[run.provider as ProviderName],
    fallbacks: (run.request.fallbacks ?? []).map(({ provider, model }) => ({
      provider: services.providers[provider as ProviderName],
      model,
    })),
    resilience: { retry: config.models.resilience.retry, cooldown: services.modelCooldown },
    history,
    save: writer.save,
    toolBox,
    call: {
      model: run.model,
      // A `/v1/responses` request's instructions apply to its run only, after the conversation's own prompt.
      system: [conversation.system, run.request.instructions].filter((s) => s != null && s !== "").join("\n\n") || null,
      toolChoice: run.request.tool_choice,
      context: conversation.context ?? DEFAULT_CONTEXT,
      cacheKey: conversation.caching ? conversation.id : null,
      maxTokens: Math.min(config.models.maxTokens, run.request.max_output_tokens ?? Infinity),
      attachments,
    },
    budget: run.request.budget ?? {
      max_steps: run.request.max_steps,
      max_tokens: null,
      max_seconds: null,
      max_cost_usd: null,
      grace_turn: true,
    },
    finish,
    costOf: (usage, model = run.model) => services.prices.costOf(model, usage),
    // Time spent paused for the application, or queued before it started, does not count against the run's time.
    resume: {
      stepsDone: run.steps,
      usageSoFar: run.usage,
      clockStartedAt: run.createdAt.getTime() + run.pausedMs,
      approvedCalls,
    },
    tokenRatio: services.tokenRatios.get(conversation.id),
    onTokenRatio: (ratio) => services.tokenRatios.set(conversation.id, ratio),
    limits: {
      modelCallTimeoutMs: config.models.callTimeoutMs,
      modelStreamIdleMs: config.models.streamIdleMs,
      graceWindowMs: config.runs.graceWindowMs,
    },
    flushEvents: writer.flush,
    beforeStep: (options) => services.intake.quiet(options),
    signal,
    onEvent,
  };
}
