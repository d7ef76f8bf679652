import { AppError, notFound } from "../errors.js";
import type { MessageShape } from "../store/fork-repository.js";
import type { Services } from "../services.js";
import { presentConversation } from "./present.js";

/**
 * The seqs a fork may end at: after a user message, after an answer that
 * calls no tool, or after the last result of a step — never between a call
 * and its results (`0`: before the first message).
 */
export function forkPoints(shapes: MessageShape[]): number[] {
  const points = [0];
  let waiting = new Set<string>();
  for (const m of shapes) {
    if (m.role === "assistant") waiting = new Set(m.callIds);
    else if (m.role === "tool") m.callIds.forEach((id) => waiting.delete(id));
    else waiting = new Set();
    if (waiting.size === 0) points.push(m.seq);
  }
  return points;
}

/**
 * A new conversation with the settings of `id` and a copy of its messages
 * 1…`atSeq` (default: the end of its last finished run), `forked_from`
 * naming the original; in one transaction, under the original's lock, so
 * no run of it starts meanwhile. An `atSeq` that splits a call from its
 * results or falls inside an open run is a 400 naming the nearest valid seqs.
 */
export async function forkConversation(
  { store, throwaways }: Services,
  tenant: string,
  id: string,
  {
    atSeq,
    title,
    throwaway = false,
  }: {
    atSeq?: number | undefined;
    title?: string | null | undefined;
    /** A `store: false` response's copy: made marked for deletion (see throwaway-keeper.ts). */
    throwaway?: boolean | undefined;
  },
) {
  const row = await store.transaction(async (tx) => {
    const original = await tx.conversations.get(tenant, id);
    if (!original || !(await tx.queue.lockConversation(id))) throw notFound("conversation", id);
    const holding = await tx.queue.holdingOf(id);
    // An open run's messages start at its first_seq; what comes before it is finished.
    const limit = holding?.firstSeq ? holding.firstSeq - 1 : await tx.messages.lastSeq(id);
    const points = forkPoints(await tx.forks.shapes(id, limit));
    const at = atSeq ?? points.at(-1)!;
    if (!points.includes(at)) {
      const before = points.filter((p) => p < at).at(-1) ?? null;
      const after = points.find((p) => p > at) ?? null;
      const why =
        at > limit
          ? holding
            ? `is inside run ${holding.id}, which is ${holding.status}`
            : `is past the last message (${limit})`
          : "splits a tool call from its results";
      throw new AppError(
        "invalid_request",
        `body.at_seq ${at} ${why}; the nearest seqs a fork may end at are ${[before, after].filter((p) => p !== null).join(" and ")}`,
        {
          field: "body.at_seq",
          nearest_valid: [before, after].filter((p) => p !== null),
        },
      );
    }
    const fork = await tx.conversations.create({
      tenantId: tenant,
      title: title !== undefined ? title : original.title,
      system: original.system,
      provider: original.provider,
      model: original.model,
      tools: original.tools,
      agents: original.agents,
      metadata: original.metadata,
      approvalRequired: original.approvalRequired,
      clientTools: original.clientTools,
      budget: original.budget,
      finish: original.finish,
      context: original.context,
      caching: original.caching,
      onProviderOutage: original.onProviderOutage,
      webhook: original.webhook,
      forkedFrom: { conversation_id: id, seq: at },
      agentName: original.agentName,
      agentVersion: original.agentVersion,
      agentOverrides: original.agentOverrides,
      discardInMs: throwaway ? throwaways?.keepMs : undefined,
    });
    await tx.forks.copyMessages(id, fork.id, at);
    return { ...fork, messageCount: at };
  });
  return presentConversation(row);
}
