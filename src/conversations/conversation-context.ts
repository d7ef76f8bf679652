import { buildContext } from "../agent/build-context.js";
import { estimateFixedTokens } from "../agent/estimate-tokens.js";
import { isSummary } from "../agent/summary-in-context.js";
import { DEFAULT_CONTEXT } from "../core/context-settings.js";
import { repairTail } from "../core/history.js";
import { sendable } from "../core/messages.js";
import type { ProviderName } from "../core/model-provider.js";
import type { HistoryFormat } from "../providers/registry.js";
import { toolBoxOf } from "../tools/tool-box-of.js";
import { loopToolsOf } from "../agent/finish-tool.js";
import type { Services } from "../services.js";
import type { ConversationRow } from "../store/schema.js";

// What a conversation's model sees, read: its whole history in a provider's format, and its next call as it stands.

/** What `GET …/context` shows as the result of a call a paused run still waits on. */
export const PENDING_RESULT =
  "not answered yet: the run waits for the application to approve this call or submit its output";

/** The whole history as that provider's SDK takes it (whole: the summaries of parts of it are left out). */
export async function historyAs(
  { store, providers }: Services,
  { tenant, conversation, format }: { tenant: string; conversation: ConversationRow; format: HistoryFormat },
) {
  const history = sendable(await store.messages.history(conversation.id)).filter((m) => !isSummary(m));
  return {
    format,
    ...providers[format].formatHistory(conversation.system, history, await store.attachments.dataOf(tenant, history)),
  };
}

/**
 * Exactly what the conversation's next model call would be sent, as the
 * provider's SDK would get it: its context built from the history as it
 * stands, with the system prompt, the tools and the caching settings.
 */
export async function nextCallOf(
  services: Services,
  {
    tenant,
    conversation,
    format,
  }: { tenant: string; conversation: ConversationRow; format?: ProviderName | undefined },
) {
  const { store, providers, config } = services;
  const stored = await store.messages.history(conversation.id);
  // While a run waits for the application, its pending calls have no result yet: they are shown with one saying so.
  const history = [...stored, ...repairTail(stored, PENDING_RESULT)];
  const tools = toolBoxOf({
    registry: services.registry,
    settings: config.tools,
    conversation,
    loopTools: loopToolsOf(conversation.finish),
  }).specs;
  const built = buildContext({
    history,
    settings: conversation.context ?? DEFAULT_CONTEXT,
    fixedTokens: estimateFixedTokens({ system: conversation.system, tools }),
    tokenRatio: services.tokenRatios.get(conversation.id),
  });
  const as = format ?? (conversation.provider as ProviderName);
  const request = providers[as].buildRequest({
    model: conversation.model,
    system: conversation.system,
    messages: built.messages,
    tools,
    toolChoice: tools.length === 0 ? "none" : "auto",
    maxTokens: config.models.maxTokens,
    cacheKey: conversation.caching ? conversation.id : null,
    attachments: await store.attachments.dataOf(tenant, built.messages),
  });
  return {
    format: as,
    estimated_input_tokens: built.estimatedTokens,
    stubbed_tool_results: built.stubbed,
    left_out: { refused: built.leftOut.refused, trimmed: built.leftOut.trimmed },
    request: request as Record<string, unknown>,
  };
}
