import { RE2JS } from "re2js";
import { checkUserSchema } from "../json-schema/check-user-schema.js";
import type { Expectations } from "./eval-case.js";

/** What an eval run did, as scoring reads it. */
export interface EvalOutcome {
  status: string;
  stop_reason: string | null;
  error: { code: string; message: string } | null;
  steps: number;
  /** USD; null when the model has no price. */
  cost_usd: number | null;
  /** The tools called, by name, in order. */
  tool_calls: string[];
  final_text: string;
  /** What the `finish` call reported; null when the run ended without one. */
  result: { result: unknown } | null;
}

/**
 * Each expectation of a case against what the run did: what failed, one
 * line each (empty when the case passes). A run that failed or was cancelled
 * fails whatever else it did. `regex` is matched by RE2 (linear time) and a
 * finish result is checked in the schema worker, so no user pattern or
 * schema can hold the runner.
 */
export async function scoreEvalCase(expect: Expectations, run: EvalOutcome): Promise<string[]> {
  const failures: string[] = [];
  if (run.status === "failed" || run.status === "cancelled") {
    failures.push(`run: ended ${run.status}${run.error ? `: ${run.error.message}` : ""}`);
  }
  if (!sameNames(expect.tool_calls, run.tool_calls)) {
    failures.push(`tool_calls: expected [${expect.tool_calls.join(", ")}], got [${run.tool_calls.join(", ")}]`);
  }
  const { contains, regex } = expect.final_text ?? {};
  if (contains !== undefined && !run.final_text.includes(contains)) {
    failures.push(
      `final_text: does not contain ${JSON.stringify(clip(contains))} (it is ${JSON.stringify(clip(run.final_text))})`,
    );
  }
  if (regex !== undefined && !RE2JS.compile(regex).matcher(run.final_text).find()) {
    failures.push(`final_text: does not match /${regex}/ (it is ${JSON.stringify(clip(run.final_text))})`);
  }
  if (expect.finish_result) {
    if (!run.result) failures.push("finish_result: the run did not end with a finish call");
    else {
      const problems = await checkUserSchema(expect.finish_result, run.result.result);
      if (problems.length > 0)
        failures.push(
          `finish_result: ${problems.map((p) => `${["result", ...p.path].join(".")} ${p.message}`).join("; ")}`,
        );
    }
  }
  if (expect.max_steps !== undefined && run.steps > expect.max_steps) {
    failures.push(`max_steps: ${run.steps} steps, more than ${expect.max_steps}`);
  }
  if (expect.max_cost_usd !== undefined) {
    if (run.cost_usd === null) failures.push("max_cost_usd: the cost is unknown (the model has no price)");
    else if (run.cost_usd > expect.max_cost_usd)
      failures.push(`max_cost_usd: $${run.cost_usd}, more than $${expect.max_cost_usd}`);
  }
  return failures;
}

const sameNames = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((name, i) => name === b[i]);

const clip = (s: string, n = 80) => (s.length <= n ? s : `${s.slice(0, n)}…`);
