import { forkConversation } from "../../conversations/fork-conversation.js";
import { AppError } from "../../errors.js";
import type { Services } from "../../services.js";
import { openAiError } from "../openai-errors.js";

/**
 * The conversation a response continues from `previous_response_id`: the
 * previous response's own when that is its conversation's latest, else a
 * fork ending where it ended (so an old response is branched from, and the
 * history is never rewritten). `fork: true` forks even from the latest (a
 * `store: false` response works on a copy). Unknown (or another tenant's):
 * 400 `previous_response_not_found`. `forked`: the conversation was made here.
 */
export async function conversationOfPrevious(
  { services }: { services: Services },
  {
    tenant,
    id,
    fork = false,
    throwaway = false,
  }: { tenant: string; id: string; fork?: boolean | undefined; throwaway?: boolean | undefined },
): Promise<{ id: string; forked: boolean }> {
  const { store } = services;
  const previous = await store.openaiResponses.get(tenant, id);
  if (!previous)
    throw openAiError("invalid_request", `Previous response with id '${id}' not found.`, {
      param: "previous_response_id",
      openaiCode: "previous_response_not_found",
    });
  const next = await store.openaiResponses.nextInConversation(previous);
  if (!next && !fork) return { id: previous.conversationId, forked: false };
  const atSeq = next ? (next.fromSeq ?? (await store.messages.lastSeq(previous.conversationId)) + 1) - 1 : undefined;
  try {
    return {
      id: (await forkConversation(services, tenant, previous.conversationId, { atSeq, throwaway })).id,
      forked: true,
    };
  } catch (err) {
    if (err instanceof AppError && err.code === "invalid_request")
      throw openAiError(
        "invalid_request",
        `response ${id} cannot be continued from: it ${err.message.replace(/^body\.at_seq \d+ /, "")}`,
        {
          param: "previous_response_id",
          openaiCode: null,
        },
      );
    throw err;
  }
}
