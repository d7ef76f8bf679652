import type { ProviderName } from "../core/model-provider.js";
import type { CaseResult } from "./case-result.js";
import type { EvalSummary } from "./eval-summary.js";
import type { ChangedCase, EvalColumn } from "./compare-evals.js";

/** What `npm run eval` ran with (its command line). */
export interface EvalOptions {
  provider?: ProviderName | undefined;
  model?: string | undefined;
  baseURL?: string | undefined;
  systemFile?: string | undefined;
  liveTools: boolean;
  concurrency: number;
  minPass: number;
}

/**
 * The JSON report of an eval, as `npm run eval` writes it (and the
 * playground's Evals page reads it): what ran, on what, the summary, and a
 * row per case. `passed`: the pass rate reached `min_pass`.
 */
export function evalReport({
  target,
  startedAt,
  finishedAt = new Date(),
  options,
  summary,
  results,
}: {
  target: string;
  startedAt: Date;
  finishedAt?: Date;
  options: EvalOptions;
  summary: EvalSummary;
  results: CaseResult[];
}) {
  return {
    ...header({ target, startedAt, finishedAt, options }),
    passed: summary.pass_rate >= options.minPass,
    summary,
    cases: results,
  };
}

export type EvalReport = ReturnType<typeof evalReport>;

/**
 * The JSON report of `npm run eval -- --agent a@1 --agent a@2`: the same
 * cases run as each version, a column each (its summary and cases), and the
 * cases whose verdict changed. `passed`: every column reached `min_pass`.
 */
export function comparisonReport({
  target,
  startedAt,
  finishedAt = new Date(),
  options,
  columns,
  changed,
}: {
  target: string;
  startedAt: Date;
  finishedAt?: Date;
  options: EvalOptions;
  columns: EvalColumn[];
  changed: ChangedCase[];
}) {
  return {
    ...header({ target, startedAt, finishedAt, options }),
    passed: columns.every((c) => c.passed),
    agents: columns,
    changed,
  };
}

const header = ({
  target,
  startedAt,
  finishedAt,
  options,
}: {
  target: string;
  startedAt: Date;
  finishedAt: Date;
  options: EvalOptions;
}) => ({
  target,
  started_at: startedAt.toISOString(),
  finished_at: finishedAt.toISOString(),
  provider: options.provider ?? null,
  model: options.model ?? null,
  base_url: options.baseURL ?? null,
  system_file: options.systemFile ?? null,
  live_tools: options.liveTools,
  concurrency: options.concurrency,
  min_pass: options.minPass,
});
