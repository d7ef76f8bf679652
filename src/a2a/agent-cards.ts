import { notFound } from "../errors.js";
import type { AgentWithVersion } from "../store/agent-repository.js";
import type { Store } from "../store/store.js";
import { agentCardJson } from "./agent-card.js";

/** The most cards `/.well-known/agent-card.json` lists: a tenant's agents are configuration, not data. */
export const MAX_LISTED_CARDS = 1_000;
const PAGE = 100;

/** A tenant's agent that takes new work over A2A: unknown, another tenant's or archived, it is not found. */
export async function liveAgent(
  store: Pick<Store, "agents">,
  { tenant, name }: { tenant: string; name: string },
): Promise<AgentWithVersion> {
  const agent = await store.agents.get(tenant, name);
  if (!agent || agent.archivedAt) throw notFound("agent", name);
  return agent;
}

/** The cards of a tenant's agents (not the archived), newest created first, at most `MAX_LISTED_CARDS`. */
export async function agentCards(
  store: Pick<Store, "agents">,
  { tenant, baseUrl }: { tenant: string; baseUrl: string },
): Promise<ReturnType<typeof agentCardJson>[]> {
  const cards: ReturnType<typeof agentCardJson>[] = [];
  let after: { createdAt: Date; id: string } | undefined;
  while (cards.length < MAX_LISTED_CARDS) {
    const page = await store.agents.list(tenant, { limit: PAGE, after });
    for (const agent of page.rows) if (!agent.archivedAt) cards.push(agentCardJson(agent, { baseUrl }));
    const last = page.rows.at(-1);
    if (!page.hasMore || !last) break;
    after = { createdAt: last.createdAt, id: last.id };
  }
  return cards.slice(0, MAX_LISTED_CARDS);
}
