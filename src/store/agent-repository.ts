import { and, desc, eq, lt, notInArray, sql } from "drizzle-orm";
import type { Db } from "./db.js";
import { newId } from "./ids.js";
import { olderThan, pageOf, type Keyset } from "./keyset.js";
import { agents, agentVersions, type AgentRow, type AgentVersionRow, type Configuration } from "./schema.js";
import { uniqueViolation } from "./unique-violation.js";

/** An agent with one of its versions: what the API shows. */
export type AgentWithVersion = AgentRow & { at: AgentVersionRow };

/** What a version is written with. */
export interface NewAgentVersion {
  description: string | null;
  configuration: Configuration;
}

/**
 * Named agents and their versions, every query a tenant's. Versions are
 * only ever added: `addVersion` moves the agent's `version` on from the one
 * the caller read, in one conditional update, so two writers never make the
 * same version.
 */
export function createAgentRepository({ db }: { db: Db }) {
  const latest = and(eq(agentVersions.agentId, agents.id), eq(agentVersions.version, agents.version));
  const withLatest = (rows: Array<{ agent: AgentRow; at: AgentVersionRow }>): AgentWithVersion[] =>
    rows.map(({ agent, at }) => ({ ...agent, at }));

  return {
    /** A new agent at version 1; null when the tenant already has one by that name. */
    async create({
      tenant,
      name,
      fromFile = false,
      ...first
    }: NewAgentVersion & { tenant: string; name: string; fromFile?: boolean }): Promise<AgentWithVersion | null> {
      try {
        return await db.transaction(async (tx) => {
          const [agent] = await tx
            .insert(agents)
            .values({ id: newId("agt"), tenantId: tenant, name, version: 1, fromFile })
            .returning();
          const [at] = await tx
            .insert(agentVersions)
            .values({ agentId: agent!.id, version: 1, ...first })
            .returning();
          return { ...agent!, at: at! };
        });
      } catch (err) {
        if (uniqueViolation(err) === "agents_tenant_name_key") return null;
        throw err;
      }
    },

    /** The tenant's agent by name, at its latest version or at `version` (undefined: no such agent or version). */
    async get(tenant: string, name: string, version?: number): Promise<AgentWithVersion | undefined> {
      const rows = await db
        .select({ agent: agents, at: agentVersions })
        .from(agents)
        .innerJoin(
          agentVersions,
          version === undefined
            ? latest
            : and(eq(agentVersions.agentId, agents.id), eq(agentVersions.version, version)),
        )
        .where(and(eq(agents.tenantId, tenant), eq(agents.name, name)));
      return withLatest(rows)[0];
    },

    /** A tenant's agents at their latest versions, newest created first; one extra row tells whether more follow. */
    async list(tenant: string, { limit, after }: { limit: number; after?: Keyset | undefined }) {
      const rows = await db
        .select({ agent: agents, at: agentVersions })
        .from(agents)
        .innerJoin(agentVersions, latest)
        .where(and(eq(agents.tenantId, tenant), olderThan(agents.createdAt, agents.id, after)))
        .orderBy(desc(agents.createdAt), desc(agents.id))
        .limit(limit + 1);
      return pageOf(withLatest(rows), limit);
    },

    /** An agent's versions, newest first, those before `before` when it is given. */
    async versions(agent: AgentRow, { limit, before }: { limit: number; before?: number | undefined }) {
      const rows = await db
        .select()
        .from(agentVersions)
        .where(
          and(
            eq(agentVersions.agentId, agent.id),
            before === undefined ? undefined : lt(agentVersions.version, before),
          ),
        )
        .orderBy(desc(agentVersions.version))
        .limit(limit + 1);
      return pageOf(
        rows.map((at) => ({ ...agent, at })),
        limit,
      );
    },

    /**
     * Writes the version after `from`, when `from` is still the agent's
     * latest; null when another write got there first (or the agent is gone).
     */
    async addVersion(agent: AgentRow, from: number, next: NewAgentVersion): Promise<AgentWithVersion | null> {
      return db.transaction(async (tx) => {
        const [moved] = await tx
          .update(agents)
          .set({ version: from + 1, updatedAt: new Date() })
          .where(and(eq(agents.id, agent.id), eq(agents.version, from)))
          .returning();
        if (!moved) return null;
        const [at] = await tx
          .insert(agentVersions)
          .values({ agentId: agent.id, version: from + 1, ...next })
          .returning();
        return { ...moved, at: at! };
      });
    },

    /** Sets `archived_at` (kept from the first archive) and `from_file`; the agent as it now stands. */
    async mark(
      agent: AgentRow,
      { archived, fromFile }: { archived?: true; fromFile?: boolean },
    ): Promise<AgentRow | undefined> {
      const [row] = await db
        .update(agents)
        .set({
          updatedAt: new Date(),
          ...(archived && { archivedAt: sql`coalesce(${agents.archivedAt}, now())` }),
          ...(fromFile !== undefined && { fromFile }),
        })
        .where(eq(agents.id, agent.id))
        .returning();
      return row;
    },

    /** `AGENTS_FILE` no longer names them: its agents but `kept` become writable over HTTP. */
    async releaseFromFile(kept: Array<{ tenant: string; name: string }>): Promise<void> {
      await db
        .update(agents)
        .set({ fromFile: false, updatedAt: new Date() })
        .where(
          and(
            eq(agents.fromFile, true),
            notInArray(
              sql`${agents.tenantId} || '/' || ${agents.name}`,
              kept.map(({ tenant, name }) => `${tenant}/${name}`),
            ),
          ),
        );
    },
  };
}

export type AgentRepository = ReturnType<typeof createAgentRepository>;
