import type { FakeLlm } from "../../test/support/fake-llm/server.js";
import { summarize, type Stats } from "../lib/measure.js";

export interface BudgetOverheadRow {
  steps: number;
  /** ms per step of a run with no limit but `max_steps`. */
  plain: Stats;
  /** ms per step of the same run with every budget set (none reached). */
  budgeted: Stats;
}

/**
 * budget: What the budget checks cost: the same tool-calling run (`steps` tool
 * steps, then an answer), with and without tokens, seconds and cost limits
 * set high enough never to be reached, interleaved pair by pair.
 */
export async function measureBudgetOverhead({
  llm,
  loopdUrl,
  runs,
  steps,
}: {
  llm: FakeLlm;
  loopdUrl: string;
  runs: number;
  steps: number;
}): Promise<BudgetOverheadRow> {
  llm.respond = (req) => {
    const results = (req.body.messages as { role: string }[]).filter((m) => m.role === "tool").length;
    return results < steps
      ? { toolCalls: [{ name: "calculate", input: { expression: `${results}+1` } }] }
      : { text: "Done." };
  };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${loopdUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const timeRun = async (budget: Record<string, unknown>) => {
    const conv = (await post("/conversations", {})).id as string;
    const t0 = performance.now();
    const { run } = await post(`/conversations/${conv}/messages`, {
      content: "Count.",
      budget: { max_steps: steps + 2, ...budget },
    });
    if (run.status !== "completed" || run.steps !== steps + 1)
      throw new Error(`run ended ${run.status} after ${run.steps} steps`);
    return (performance.now() - t0) / run.steps;
  };
  const plain: number[] = [];
  const budgeted: number[] = [];
  const warmup = 3;
  for (let i = 0; i < runs + warmup; i++) {
    const a = await timeRun({});
    const b = await timeRun({ max_tokens: 1e9, max_seconds: 3600, max_cost_usd: 1000 });
    if (i >= warmup) {
      plain.push(a);
      budgeted.push(b);
    }
  }
  llm.respond = null;
  return { steps, plain: summarize(plain, 1), budgeted: summarize(budgeted, 1) };
}
