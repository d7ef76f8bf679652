import { DEFAULT_CONTEXT } from "../core/context-settings.js";
import type { Message } from "../core/messages.js";
import type { ConversationWithActiveRun } from "../store/conversation-repository.js";
import type { MessageRow, RunRow } from "../store/schema.js";

/** Rows as the API contract shows them. */

export function presentConversation(row: ConversationWithActiveRun) {
  return {
    id: row.id,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    title: row.title,
    system: row.system,
    provider: row.provider,
    model: row.model,
    tools: row.tools,
    metadata: row.metadata,
    approval_required: row.approvalRequired,
    client_tools: row.clientTools,
    action_timeout_s: row.actionTimeoutS,
    budget: row.budget,
    finish: row.finish,
    context: row.context ?? DEFAULT_CONTEXT,
    caching: row.caching,
    on_provider_outage: row.onProviderOutage,
    usage: row.usage,
    message_count: row.messageCount,
    active_run_id: row.activeRunId,
    chat_id: row.chatId,
    webhook: row.webhook,
    forked_from: row.forkedFrom,
    fallbacks: row.fallbacks ?? [],
    agent:
      row.agentName !== null && row.agentVersion !== null ? { name: row.agentName, version: row.agentVersion } : null,
    agent_overrides: row.agentName !== null ? (row.agentOverrides ?? {}) : null,
    agents: row.agents,
    parent: row.parent && {
      conversation_id: row.parent.conversation_id,
      run_id: row.parent.run_id,
      tool_call_id: row.parent.tool_call_id,
    },
  };
}

export function presentMessage(row: MessageRow): Message {
  return {
    id: row.id,
    seq: row.seq,
    role: row.role,
    run_id: row.runId,
    created_at: row.createdAt.toISOString(),
    ...(row.kind && { kind: row.kind }),
    // jsonb keeps keys by length: put them back in the contract's order.
    ...(row.summarizes && { summarizes: { from_seq: row.summarizes.from_seq, to_seq: row.summarizes.to_seq } }),
    ...(row.excluded && { excluded: row.excluded }),
    content: row.content,
  } as Message;
}

export function presentRun(row: RunRow) {
  return {
    id: row.id,
    conversation_id: row.conversationId,
    status: row.status,
    stop_reason: row.stopReason,
    steps: row.steps,
    provider: row.provider,
    model: row.model,
    usage: { ...row.usage, cost_usd: row.usage.cost_usd ?? null },
    // Null in the row while the run's own model answered every step.
    models_used:
      row.modelsUsed ?? (row.steps > 0 ? [{ provider: row.provider, model: row.model, steps: row.steps }] : []),
    error: row.error ?? null,
    agent: row.request.agent ?? null,
    children: (row.children ?? []).map((c) => ({ conversation_id: c.conversation_id, run_id: c.run_id })),
    ...(row.budgetExceeded && { budget_exceeded: row.budgetExceeded }),
    ...(row.request.budget && { budget: row.request.budget }),
    // Present on a run asked to end with `finish`: null until (or unless) a valid call ends it.
    ...(row.request.finish && { result: row.result ?? null }),
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt ? row.completedAt.toISOString() : null,
    ...(row.status === "queued" && { queued_behind: row.queuedBehind }),
    ...(row.status === "waiting" && {
      outage: {
        since: (row.outageSince ?? row.createdAt).toISOString(),
        next_probe_at: (row.wakeAt ?? row.createdAt).toISOString(),
        give_up_at: (row.giveUpAt ?? row.createdAt).toISOString(),
        probes: row.outageProbes,
      },
    }),
    ...(row.status === "requires_action" &&
      row.requiredAction && {
        required_action: {
          expires_at: new Date(row.requiredAction.expires_at).toISOString(),
          // A call a child run waits on names that run (answered here, it is carried there).
          tool_calls: row.requiredAction.tool_calls.map(({ via, ...call }) => ({
            ...call,
            ...(via && { child: { conversation_id: via.conversation_id, run_id: via.run_id } }),
          })),
        },
      }),
  };
}
