import { printable } from "../cli/run-cli.js";
import type { CaseResult } from "./case-result.js";

/** The whole of an eval: how many cases passed, and what they used. */
export interface EvalSummary {
  cases: number;
  passed: number;
  failed: number;
  /** passed / cases (1 when there are none). */
  pass_rate: number;
  input_tokens: number;
  output_tokens: number;
  /** USD of the cases whose model has a price; `unpriced_cases` says how many had none. */
  cost_usd: number;
  unpriced_cases: number;
  /** Model calls of every case. */
  steps: number;
  /** Per case, from its message sent to its run's end (`p50`: the median of the cases that ran). */
  latency_ms: { total: number; mean: number; p50: number; max: number };
}

export function summaryOf(results: readonly CaseResult[]): EvalSummary {
  const passed = results.filter((r) => r.pass).length;
  const ran = results.filter((r) => r.usage !== null);
  const sum = (f: (r: CaseResult) => number) => results.reduce((n, r) => n + f(r), 0);
  const latency = sum((r) => r.latency_ms);
  return {
    cases: results.length,
    passed,
    failed: results.length - passed,
    pass_rate: results.length === 0 ? 1 : passed / results.length,
    input_tokens: sum((r) => r.usage?.input_tokens ?? 0),
    output_tokens: sum((r) => r.usage?.output_tokens ?? 0),
    cost_usd: sum((r) => r.usage?.cost_usd ?? 0),
    unpriced_cases: ran.filter((r) => r.usage!.cost_usd === null).length,
    steps: sum((r) => r.steps),
    latency_ms: {
      total: latency,
      mean: ran.length === 0 ? 0 : Math.round(latency / ran.length),
      p50: median(ran.map((r) => r.latency_ms)),
      max: Math.max(0, ...results.map((r) => r.latency_ms)),
    },
  };
}

/** A case's line of the table: pass or fail, steps, tokens, cost, latency, name, then what failed (a line each; what a case file or a model wrote, without control characters). */
export function rowOf(r: CaseResult): string {
  const tokens = r.usage ? r.usage.input_tokens + r.usage.output_tokens : 0;
  const cost = r.usage ? costText(r.usage.cost_usd) : "-";
  const cells = [
    r.pass ? "PASS" : "FAIL",
    `${r.steps}`.padStart(5),
    `${tokens}`.padStart(7),
    cost.padStart(10),
    `${r.latency_ms} ms`.padStart(9),
    printable(r.name),
  ];
  return [cells.join("  "), ...r.failures.map((f) => `      ${printable(f)}`)].join("\n");
}

export const HEADER = [
  "case",
  "steps".padStart(5),
  "tokens".padStart(7),
  "cost".padStart(10),
  "latency".padStart(9),
  "name",
].join("  ");

export function summaryLines(s: EvalSummary): string[] {
  return [
    `pass rate: ${s.passed}/${s.cases} (${(s.pass_rate * 100).toFixed(1)}%)`,
    `tokens: ${s.input_tokens} in, ${s.output_tokens} out; cost: ${costText(s.cost_usd)}${s.unpriced_cases > 0 ? ` (${s.unpriced_cases === 1 ? "1 case of a model" : `${s.unpriced_cases} cases of models`} without a price)` : ""}`,
    `latency: ${s.latency_ms.total} ms in all, ${s.latency_ms.mean} ms a case on average, ${s.latency_ms.max} ms the longest`,
  ];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length === 0 ? 0 : sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

export const costText = (usd: number | null) => (usd === null ? "no price" : `$${usd.toFixed(4)}`);
