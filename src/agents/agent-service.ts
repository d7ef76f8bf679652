import { AppError, notFound } from "../errors.js";
import type { Services } from "../services.js";
import type { AgentWithVersion, NewAgentVersion } from "../store/agent-repository.js";
import type { AgentRow, Configuration } from "../store/schema.js";
import { decodeCursor, encodeCursor } from "../conversations/cursor.js";
import { givenFields } from "../conversations/pin-agent.js";
import { hashOfRequest } from "../conversations/request-hash.js";
import { settleConfiguration } from "../conversations/settle-configuration.js";
import { presentAgent } from "./present-agent.js";

/** An agent's own fields beside its configuration. */
type Described = Configuration & { description?: string | null | undefined };

/**
 * Named, versioned agents: a configuration checked as a conversation's,
 * kept as written (defaults are filled in when a conversation starts from
 * it). A change makes a new version only from the latest one, and only when
 * something changed; versions are never rewritten.
 */
export function createAgentService(services: Services) {
  const { store } = services;

  const load = async (tenant: string, name: string, version?: number) => {
    const agent = await store.agents.get(tenant, name, version);
    if (!agent) throw notFound("agent", version === undefined ? name : `${name} version ${version}`);
    return agent;
  };
  const writable = (agent: AgentRow) => {
    if (agent.fromFile)
      throw new AppError("agent_from_file", `agent ${agent.name} is defined by AGENTS_FILE: change it there`, {
        name: agent.name,
      });
  };

  return {
    async create(tenant: string, { name, ...fields }: Described & { name: string }) {
      const first = versionOf(fields);
      await settleConfiguration(services, tenant, first.configuration);
      const agent = await store.agents.create({ tenant, name, ...first });
      if (!agent) throw new AppError("agent_exists", `agent ${name} already exists`, { field: "body.name", name });
      return presentAgent(agent);
    },

    get: async (tenant: string, name: string, version?: number) => presentAgent(await load(tenant, name, version)),

    async list(tenant: string, { limit, cursor }: { limit: number; cursor?: string | undefined }) {
      const page = await store.agents.list(tenant, { limit, after: cursor ? decodeCursor(cursor) : undefined });
      const last = page.rows.at(-1);
      return { data: page.rows.map(presentAgent), next_cursor: page.hasMore && last ? encodeCursor(last) : null };
    },

    /** Newest first; the cursor is the last version shown. */
    async versions(tenant: string, name: string, { limit, cursor }: { limit: number; cursor?: string | undefined }) {
      const agent = await load(tenant, name);
      const before = cursor ? Number(decodeCursor(cursor).id) : undefined;
      if (before !== undefined && !Number.isInteger(before))
        throw new AppError("invalid_request", "cursor is not one this server returned", { field: "cursor" });
      const page = await store.agents.versions(agent, { limit, before });
      const last = page.rows.at(-1);
      return {
        data: page.rows.map(presentAgent),
        next_cursor:
          page.hasMore && last ? encodeCursor({ createdAt: last.at.createdAt, id: String(last.at.version) }) : null,
      };
    },

    /** `version`: the one the client last saw, which must still be the latest. */
    async update(tenant: string, name: string, { version, ...change }: Described & { version: number }) {
      const agent = await load(tenant, name);
      writable(agent);
      const next = versionOf({ description: agent.at.description, ...agent.at.configuration, ...givenFields(change) });
      return presentAgent(await changeAgent(services, { agent, from: version, next }));
    },

    async archive(tenant: string, name: string) {
      const agent = await load(tenant, name);
      writable(agent);
      const marked = await store.agents.mark(agent, { archived: true });
      if (!marked) throw notFound("agent", name);
      return presentAgent({ ...marked, at: agent.at });
    },
  };
}

/** What a version holds of the fields given: its description and its configuration. */
export const versionOf = ({ description, ...configuration }: Described): NewAgentVersion => ({
  description: description ?? null,
  configuration: givenFields(configuration),
});

/**
 * The agent at version `next` after `from`: the same row when nothing
 * changed (no new version), else the next version, checked as a
 * conversation's configuration. `from` not the latest: `version_conflict`.
 */
export async function changeAgent(
  services: Services,
  { agent, from, next }: { agent: AgentWithVersion; from: number; next: NewAgentVersion },
): Promise<AgentWithVersion> {
  const conflict = (current: number) =>
    new AppError(
      "version_conflict",
      `agent ${agent.name} is at version ${current}, not ${from}: read it again and change that`,
      { current_version: current },
    );
  if (from !== agent.version) throw conflict(agent.version);
  // jsonb keeps no key order, so versions compare by canonical JSON; a list's order counts.
  const { description, configuration } = agent.at;
  if (hashOfRequest(next) === hashOfRequest({ description, configuration })) return agent;
  await settleConfiguration(services, agent.tenantId, next.configuration);
  const written = await services.store.agents.addVersion(agent, from, next);
  if (written) return written;
  const now = await services.store.agents.get(agent.tenantId, agent.name);
  if (!now) throw notFound("agent", agent.name);
  throw conflict(now.version);
}

export type AgentService = ReturnType<typeof createAgentService>;
