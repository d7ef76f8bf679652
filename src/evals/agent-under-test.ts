import type { Configuration } from "../store/schema.js";

/** An agent's version the cases run against: its configuration, as a conversation pinned to it gets it. */
export interface AgentUnderTest {
  name: string;
  version: number;
  configuration: Configuration;
}

/** How a column of a comparison is named: `support@3`. */
export const labelOf = (agent: Pick<AgentUnderTest, "name" | "version">) => `${agent.name}@${agent.version}`;

/** The fields of an agent as the API shows it that are its own, not its configuration's. */
const OWN_FIELDS = ["id", "name", "version", "description", "created_at", "updated_at", "archived_at", "from_file"];

/** An agent as `GET /agents/:name[/versions/:version]` answers it, as the cases run against it. */
export function agentOfApi(body: Record<string, unknown>): AgentUnderTest {
  return {
    name: body.name as string,
    version: body.version as number,
    configuration: Object.fromEntries(
      Object.entries(body).filter(([key, value]) => !OWN_FIELDS.includes(key) && value !== undefined),
    ) as Configuration,
  };
}
