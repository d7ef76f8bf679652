import type { ProviderName } from "../../core/model-provider.js";
import { emptyUsage, type RunUsage } from "../../core/usage.js";
import { newRunId } from "../../runs/start-run.js";
import type { Services } from "../../services.js";
import type { SummaryCall } from "./compact-summary-call.js";

/**
 * A compaction's summary call as a run of its compaction's conversation,
 * ended as it is written (0 steps, its usage and cost): `GET /usage`, the
 * conversation's usage and `TENANT_DAILY_COST_USD` count it as any run's,
 * and the metrics hear it as a summary call (`context.summary`) of a run
 * that ended. Its usage, cost included.
 */
export async function recordCompactionRun(
  { store, prices, telemetry, tenantCost }: Pick<Services, "store" | "prices" | "telemetry" | "tenantCost">,
  {
    tenant,
    conversationId,
    provider,
    model,
    called,
    messages,
    instructions,
    startedAt,
  }: {
    tenant: string;
    conversationId: string;
    provider: ProviderName;
    model: string;
    called: SummaryCall;
    /** How many messages it condensed. */
    messages: number;
    instructions: string | null;
    startedAt: number;
  },
): Promise<RunUsage> {
  const cost = called.usage ? prices.costOf(model, called.usage) : null;
  const usage: RunUsage = { ...(called.usage ?? emptyUsage()), cost_usd: cost };
  const written = called.type === "written";
  const run = await store.runs.insert({
    id: newRunId(),
    conversationId,
    status: written ? "completed" : "failed",
    stopReason: written ? called.stopReason : null,
    steps: 0,
    provider,
    model,
    usage,
    ...(!written && { error: { code: "summary_failed", message: called.message } }),
    request: { max_steps: 0, tool_choice: "none", model, instructions },
    leaseMs: 0,
    completedAt: new Date(),
  });
  tenantCost.forget(tenant);
  const observer = telemetry.runStarted(run);
  observer.onEvent({
    type: "context.summary",
    provider,
    model,
    summarizes: { from_seq: 1, to_seq: messages },
    summary_seq: null,
    // What it wrote stays sealed: neither the answer nor the request goes to the traces.
    answer: null,
    error: written ? null : called.message,
    usage: called.usage,
    cost_usd: cost,
    run_steps: 0,
    run_usage: usage,
    started_at: startedAt,
    duration_ms: Date.now() - startedAt,
    body: null,
  });
  observer.end(null);
  telemetry.runEnded(run);
  return usage;
}
