import { getTableColumns, sql } from "drizzle-orm";
import { rowFromJson } from "./row-from-json.js";
import type { RunUsage } from "../core/usage.js";
import { runs, type LiveProgressColumn, type RunRow } from "./schema.js";

function withoutLive<T extends Record<LiveProgressColumn, unknown>>(row: T): Omit<T, LiveProgressColumn> {
  const {
    liveSteps: _steps,
    liveInputTokens: _input,
    liveOutputTokens: _output,
    liveCacheReadTokens: _cacheRead,
    liveCacheWriteTokens: _cacheWrite,
    liveCostUsd: _cost,
    ...rest
  } = row;
  return rest;
}

const columns = withoutLive(getTableColumns(runs));

/**
 * A run's columns as every reader selects them (a `RunRow`): while it runs,
 * its `steps` and `usage` are the live columns a step's save writes (see
 * migration 0028), else its own.
 */
export const runColumns = {
  ...columns,
  steps: sql`coalesce(${runs.liveSteps}, ${columns.steps})`.mapWith(columns.steps),
  usage: sql`loopd_run_usage(${runs})`.mapWith(columns.usage),
};

/**
 * A run as `to_jsonb` gives it (`loopd_start_run`'s; a webhook delivery's,
 * taken as the run's status changed, by whatever write), read as
 * `runColumns` reads one: its live progress, when it has some, is its
 * `steps` and `usage` (as `loopd_run_usage` builds it in SQL).
 */
export function runFromJson(json: Record<string, unknown>): RunRow {
  const row = rowFromJson(runs, json);
  const live = row.liveSteps === null ? null : { steps: row.liveSteps, usage: liveUsageOf(row) };
  return { ...withoutLive(row), ...live };
}

const liveUsageOf = (row: Record<LiveProgressColumn, number | null>): RunUsage => ({
  input_tokens: row.liveInputTokens ?? 0,
  output_tokens: row.liveOutputTokens ?? 0,
  cache_read_tokens: row.liveCacheReadTokens ?? 0,
  cache_write_tokens: row.liveCacheWriteTokens ?? 0,
  cost_usd: row.liveCostUsd,
});
