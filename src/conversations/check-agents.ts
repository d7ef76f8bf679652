import { AppError } from "../errors.js";
import type { Services } from "../services.js";

/**
 * A conversation's (or an agent version's) `agents`, without repeats: each
 * one an agent of the tenant that is not archived (another tenant's is
 * unknown, as any unknown name), else a 400 naming `body.agents[i]`.
 */
export async function checkAgents(
  { store }: Pick<Services, "store">,
  tenant: string,
  agents: readonly string[],
): Promise<string[]> {
  const found = await Promise.all(agents.map((name) => store.agents.get(tenant, name)));
  found.forEach((agent, i) => {
    const name = agents[i]!;
    if (!agent)
      throw new AppError("invalid_request", `agents[${i}]: agent ${name} does not exist`, {
        field: `body.agents[${i}]`,
        agent: name,
      });
    if (agent.archivedAt)
      throw new AppError("invalid_request", `agents[${i}]: agent ${name} is archived: no new call may start it`, {
        field: `body.agents[${i}]`,
        agent: name,
      });
  });
  return [...new Set(agents)];
}
