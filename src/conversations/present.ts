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
    usage: row.usage,
    message_count: row.messageCount,
    active_run_id: row.activeRunId,
    chat_id: row.chatId,
    webhook: row.webhook,
    forked_from: row.forkedFrom,
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
    error: row.error ?? null,
    ...(row.budgetExceeded && { budget_exceeded: row.budgetExceeded }),
    ...(row.request.budget && { budget: row.request.budget }),
    // Present on a run asked to end with `finish`: null until (or unless) a valid call ends it.
    ...(row.request.finish && { result: row.result ?? null }),
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt ? row.completedAt.toISOString() : null,
    ...(row.status === "queued" && { queued_behind: row.queuedBehind }),
    ...(row.status === "requires_action" &&
      row.requiredAction && {
        required_action: {
          expires_at: new Date(row.requiredAction.expires_at).toISOString(),
          tool_calls: row.requiredAction.tool_calls,
        },
      }),
  };
}
