import { sql } from "drizzle-orm";
import type { Db } from "./db.js";

/** One day of one model's use by a tenant. */
export interface UsageRow {
  day: string;
  provider: string;
  model: string;
  runs: number;
  steps: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** null when none of its runs had a price. */
  cost_usd: number | null;
}

/** What a row of `byDay` grouped by agent adds: the agent version its runs ran with (null: none). */
export interface UsageByAgent {
  agent: string | null;
  agent_version: number | null;
}

/**
 * A run's own part of a usage field: what it recorded (so far, while it
 * runs: `loopd_run_usage`, migration 0028), less what its child
 * runs (calls of agents) recorded and it added to its own, so every token
 * is counted once, in the run that spent it.
 */
const own = (field: string, type: "bigint" | "numeric") =>
  sql.raw(`((loopd_run_usage(r)->>'${field}')::${type} - coalesce((select sum((c->'usage'->>'${field}')::${type})
    from jsonb_array_elements(r.children) c where c ? 'usage'), 0))`);

/** What a tenant's runs used, from the usage and cost each run recorded. */
export function createUsageRepository({ db }: { db: Db }) {
  return {
    /**
     * What a tenant's runs started since `since` have cost so far (runs
     * without a price count nothing). Its conversations by their tenant
     * index, then each one's runs since then by theirs: the work grows
     * with the tenant's conversations, so callers cache it.
     */
    async costSince(tenant: string, since: Date): Promise<number> {
      const result = await db.execute(
        sql`select coalesce(sum(${own("cost_usd", "numeric")}), 0) as cost_usd
          from runs r join conversations c on c.id = r.conversation_id
          where c.tenant_id = ${tenant} and r.created_at >= ${since.toISOString()}::timestamptz`,
      );
      return Number((result as unknown as { rows: Array<{ cost_usd: unknown }> }).rows[0]?.cost_usd ?? 0);
    },

    /**
     * By UTC day (of the run's start), provider and model, from `from` to
     * `to` (days, both included), in that order; `byAgent`: by the agent
     * version the runs ran with too.
     */
    async byDay(
      tenant: string,
      { from, to, byAgent = false }: { from: string; to: string; byAgent?: boolean },
    ): Promise<Array<UsageRow & Partial<UsageByAgent>>> {
      const agent = byAgent
        ? sql`, r.request->'agent'->>'name' as agent, (r.request->'agent'->>'version')::integer as agent_version`
        : sql``;
      const groups = byAgent ? sql`1, 2, 3, 4, 5` : sql`1, 2, 3`;
      const result = await db.execute(
        sql`select to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD') as day, r.provider, r.model${agent},
            count(*) as runs, coalesce(sum(coalesce(r.live_steps, r.steps)), 0) as steps,
            coalesce(sum(${own("input_tokens", "bigint")}), 0) as input_tokens,
            coalesce(sum(${own("output_tokens", "bigint")}), 0) as output_tokens,
            coalesce(sum(${own("cache_read_tokens", "bigint")}), 0) as cache_read_tokens,
            coalesce(sum(${own("cache_write_tokens", "bigint")}), 0) as cache_write_tokens,
            round(sum(${own("cost_usd", "numeric")}), 9) as cost_usd
          from runs r join conversations c on c.id = r.conversation_id
          where c.tenant_id = ${tenant}
            and r.created_at >= (${from}::date)::timestamp at time zone 'UTC'
            and r.created_at < ((${to}::date + 1)::timestamp at time zone 'UTC')
          group by ${groups} order by ${groups}`,
      );
      return (result as unknown as { rows: Record<string, unknown>[] }).rows.map((r) => ({
        day: String(r.day),
        provider: String(r.provider),
        model: String(r.model),
        ...(byAgent && {
          agent: r.agent === null ? null : String(r.agent),
          agent_version: r.agent_version === null ? null : Number(r.agent_version),
        }),
        runs: Number(r.runs),
        steps: Number(r.steps),
        input_tokens: Number(r.input_tokens),
        output_tokens: Number(r.output_tokens),
        cache_read_tokens: Number(r.cache_read_tokens),
        cache_write_tokens: Number(r.cache_write_tokens),
        cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
      }));
    },
  };
}
