import { getTableColumns, sql } from "drizzle-orm";
import { rowFromJson } from "./row-from-json.js";
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
 * A run as `to_jsonb` gives it: one `loopd_start_run` just started, or one a
 * webhook tells of as it stopped running. Neither has live progress (the
 * trigger of migration 0028 folds it as a run stops running).
 */
export const runFromJson = (json: Record<string, unknown>): RunRow => withoutLive(rowFromJson(runs, json));
