import { AppError, notFound } from "../errors.js";
import type { Services } from "../services.js";
import type { ConversationWithActiveRun } from "../store/conversation-repository.js";
import type { Configuration } from "../store/schema.js";
import { agentVersion, givenFields } from "./pin-agent.js";
import { settleConfiguration } from "./settle-configuration.js";

/** A change to a conversation: its configuration's fields and its title. */
type Change = Configuration & { title?: string | null | undefined };

/** A conversation's overrides once `change` is made: the fields it gives replace the ones kept, the title is not one. */
export const overridesAfter = (current: Pick<ConversationWithActiveRun, "agentOverrides">, change: Change) => {
  const { title: _title, ...fields } = change;
  return givenFields({ ...current.agentOverrides, ...fields });
};

/**
 * `PATCH /conversations/:id {"agent_version": n}`: pins the conversation to
 * another version of its agent, between runs (`conversation_busy` while one
 * is open), and works its settings out again: that version's configuration
 * with its overrides, and the change's fields, over it. An archived agent's
 * conversations may still move: archiving refuses only new ones.
 */
export async function moveAgentVersion(
  services: Services,
  { current, to, input }: { current: ConversationWithActiveRun; to: number; input: Change },
): Promise<ConversationWithActiveRun> {
  const tenant = current.tenantId;
  if (current.agentName === null)
    throw new AppError("invalid_request", `conversation ${current.id} was not started from an agent`, {
      field: "body.agent_version",
    });
  const busy = (activeRunId: string) =>
    new AppError("conversation_busy", `conversation ${current.id} already has an active run`, {
      active_run_id: activeRunId,
    });
  if (current.activeRunId) throw busy(current.activeRunId);
  const agent = await agentVersion(services.store, {
    tenant,
    name: current.agentName,
    version: to,
    field: "body.agent_version",
  });
  const overrides = overridesAfter(current, input);
  const settings = await settleConfiguration(services, tenant, { ...agent.at.configuration, ...overrides });
  // Under the conversation's lock, which every creator of a run takes first: no run starts between the check and the move.
  const row = await services.store.transaction(async (tx) => {
    if (!(await tx.queue.lockConversation(current.id))) return undefined;
    const activeRunId = (await tx.conversations.get(tenant, current.id))?.activeRunId;
    if (activeRunId) throw busy(activeRunId);
    return tx.conversations.update(tenant, current.id, {
      ...settings,
      ...(input.title !== undefined && { title: input.title }),
      agentVersion: to,
      agentOverrides: overrides,
    });
  });
  if (!row) throw notFound("conversation", current.id);
  return row;
}
