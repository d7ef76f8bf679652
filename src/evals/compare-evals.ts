import { printable } from "../cli/run-cli.js";
import { labelOf, type AgentUnderTest } from "./agent-under-test.js";
import type { CaseResult } from "./case-result.js";
import { costText, type EvalSummary } from "./eval-summary.js";

/** One agent version's eval: its results and summary, and whether it reached `--min-pass`. */
export interface EvalColumn {
  agent: Pick<AgentUnderTest, "name" | "version">;
  label: string;
  passed: boolean;
  summary: EvalSummary;
  cases: CaseResult[];
}

/** A case whose verdict differs between the columns: each column's, by its label. */
export interface ChangedCase {
  name: string;
  file: string;
  verdicts: Record<string, "pass" | "fail">;
}

export const columnOf = (
  agent: Pick<AgentUnderTest, "name" | "version">,
  { results, summary }: { results: CaseResult[]; summary: EvalSummary },
  minPass: number,
): EvalColumn => ({
  agent: { name: agent.name, version: agent.version },
  label: labelOf(agent),
  passed: summary.pass_rate >= minPass,
  summary,
  cases: results,
});

/** The cases (the same in every column, in the same order) whose verdict is not the same in all. */
export function changedCases(columns: readonly EvalColumn[]): ChangedCase[] {
  const [first] = columns;
  if (!first) return [];
  return first.cases.flatMap((c, i) => {
    const verdicts = columns.map((col) => col.cases[i]!.pass);
    if (verdicts.every((v) => v === verdicts[0])) return [];
    return [
      {
        name: c.name,
        file: c.file,
        verdicts: Object.fromEntries(columns.map((col, j) => [col.label, verdicts[j] ? "pass" : "fail"])),
      },
    ];
  });
}

/** The columns side by side: pass rate, tokens, cost, steps, latency p50; then the cases whose verdict changed, named. */
export function comparisonLines(columns: readonly EvalColumn[], changed: readonly ChangedCase[]): string[] {
  const rows: [string, (s: EvalSummary) => string][] = [
    ["pass rate", (s) => `${s.passed}/${s.cases} (${(s.pass_rate * 100).toFixed(1)}%)`],
    ["tokens", (s) => `${s.input_tokens + s.output_tokens}`],
    ["cost", (s) => costText(s.cost_usd) + (s.unpriced_cases > 0 ? "*" : "")],
    ["steps", (s) => `${s.steps}`],
    ["latency p50", (s) => `${s.latency_ms.p50} ms`],
  ];
  const cells = [
    ["", ...columns.map((c) => c.label)],
    ...rows.map(([name, f]) => [name, ...columns.map((c) => f(c.summary))]),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const table = cells.map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("   ")
      .trimEnd(),
  );
  const verdicts = changed.map(
    (c) => `  ${printable(c.name)}: ${columns.map((col) => `${c.verdicts[col.label]!.toUpperCase()}`).join(" → ")}`,
  );
  return [
    ...table,
    ...(columns.some((c) => c.summary.unpriced_cases > 0) ? ["* some cases ran on a model without a price"] : []),
    changed.length === 0
      ? "no case changed verdict"
      : `${changed.length} case${changed.length === 1 ? "" : "s"} changed verdict (${columns.map((c) => c.label).join(" → ")}):`,
    ...verdicts,
  ];
}
