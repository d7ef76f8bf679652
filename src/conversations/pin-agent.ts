import { AppError } from "../errors.js";
import type { AgentWithVersion } from "../store/agent-repository.js";
import type { Configuration } from "../store/schema.js";
import type { Store } from "../store/store.js";

/** What `agent` of `POST /conversations` names: an agent (its latest version), or one of its versions. */
export type AgentPin = string | { name: string; version: number };

/**
 * The agent version a new conversation is pinned to: a 400 naming `field`
 * for an unknown agent or version (another tenant's is unknown too), a 409
 * `agent_archived` for an archived one.
 */
export async function pinAgent(
  store: Pick<Store, "agents">,
  { tenant, pin, field = "body.agent" }: { tenant: string; pin: AgentPin; field?: string },
): Promise<AgentWithVersion> {
  const { name, version } = typeof pin === "string" ? { name: pin, version: undefined } : pin;
  const agent = await agentVersion(store, { tenant, name, version, field });
  if (agent.archivedAt)
    throw new AppError("agent_archived", `agent ${name} is archived: no new conversation starts from it`, {
      field,
      archived_at: agent.archivedAt.toISOString(),
    });
  return agent;
}

/** An agent at a version (default: its latest), or a 400 naming `field`. */
export async function agentVersion(
  store: Pick<Store, "agents">,
  { tenant, name, version, field }: { tenant: string; name: string; version?: number | undefined; field: string },
): Promise<AgentWithVersion> {
  const agent = await store.agents.get(tenant, name, version);
  if (agent) return agent;
  const latest = version === undefined ? undefined : await store.agents.get(tenant, name);
  throw new AppError(
    "invalid_request",
    latest
      ? `agent ${name} has no version ${version} (its latest is ${latest.version})`
      : `agent ${name} does not exist`,
    { field, ...(latest && { latest_version: latest.version }) },
  );
}

/** The fields of a configuration that were given (a key present with `undefined` is not). */
export const givenFields = (input: Configuration): Configuration =>
  Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
