import { presentRun } from "../../conversations/present.js";
import type { Services } from "../../services.js";
import type { RunRow } from "../../store/schema.js";
import { presentResponse } from "./present-response.js";
import type { ResponseRecord } from "./read-response.js";
import { createResponseStreamEncoder } from "./response-stream-encoder.js";

/** The conversation's server tools (any other call is the client's) and those that wait for approval. */
export interface ConversationTools {
  serverTools: readonly string[];
  approvalRequired: readonly string[];
}

/**
 * The encoder of a response's stream, from its start (`startingAfter`: the
 * last event the client has); `tools` as the response was just made, else
 * read from its conversation.
 */
export async function responseEncoderOf(
  { store }: Pick<Services, "store">,
  {
    record,
    run,
    startingAfter,
    tools,
  }: { record: ResponseRecord; run: RunRow; startingAfter?: number | undefined; tools?: ConversationTools | undefined },
) {
  const { serverTools, approvalRequired } = tools ?? (await toolsOf(store, record));
  const shown = presentRun(run);
  return createResponseStreamEncoder({
    runId: run.id,
    lastSeq: (record.fromSeq ?? run.firstSeq ?? 1) - 1,
    serverTools,
    approvalRequired,
    startingAfter,
    startedAs: { ...shown, status: run.status === "queued" ? "queued" : "running", completed_at: null },
    snapshot: (view, output) =>
      presentResponse({
        ...record,
        completedAt: view.completed_at ?? (view.status === "requires_action" ? new Date() : null),
        run: view,
        output,
      }),
  });
}

async function toolsOf(store: Services["store"], record: ResponseRecord): Promise<ConversationTools> {
  const conversation = await store.conversations.get(record.tenant, record.conversationId);
  return { serverTools: conversation?.tools ?? [], approvalRequired: conversation?.approvalRequired ?? [] };
}
