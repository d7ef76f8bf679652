import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";
import type { AgentEvent } from "../core/agent-events.js";
import type { Usage } from "../core/usage.js";
import { boundedLabel, OTHER_LABEL } from "./bounded-label.js";
import { createPauseCounters } from "./pause-counters.js";
import { createModelMetrics, type ModelState } from "./model-metrics.js";
import type { RunObserver, Telemetry } from "./telemetry.js";
import { watchState, type MetricsSources } from "./watch-state.js";

export interface MetricsOptions {
  /** Where a registered tool comes from (its source and MCP server); undefined for a name a model made up, counted as `_other`. */
  describeTool: (name: string) => { source: string; server: string | null } | undefined;
  /** The state of each called model's circuit in this process (`GET /models/health`). */
  modelStates: () => ModelState[];
  /** Distinct model names kept as label values, per metric family; past it, `_other`. @default 100 */
  maxModels?: number;
  /** Distinct agent names kept as label values; past it, `_other`. @default 100 */
  maxAgents?: number;
}

export interface Metrics {
  /** This app's own registry: several apps in one process never share one. */
  registry: Registry;
  telemetry: Telemetry;
  /** Registers the gauges that read the app's state at scrape time. */
  watch(sources: MetricsSources): void;
  /** An MCP server is being started again. */
  serverRestarted(server: string): void;
  /** The retention sweep deleted this many conversations. */
  retentionDeleted(count: number): void;
  /** A webhook try ended: `delivered`, or why not (`http_error`, `redirect`, `timeout`, `unreachable`, `refused`). */
  webhookAttempted(outcome: string): void;
  /** A webhook delivery's last word. */
  webhookSettled(status: "delivered" | "failed"): void;
}

const MODEL_CALL_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
const FIRST_TOKEN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
const TOOL_CALL_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Prometheus metrics of runs, model calls and tool calls, counted from the
 * loop's events. Labels are provider, model, tool name and outcomes, never
 * an id, so the number of series stays bounded.
 */
export function createMetrics({
  describeTool,
  modelStates,
  maxModels = 100,
  maxAgents = 100,
}: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const modelLabel = boundedLabel(maxModels);
  const modelMetrics = createModelMetrics({ registers, modelLabel, modelStates });
  // The agent's name, "" for a run without one: names are few, and bounded anyway (a tenant makes them).
  const agentLabel = boundedLabel(maxAgents);
  const agentOf = (run: { request?: { agent?: { name: string } | null | undefined } }) =>
    agentLabel(run.request?.agent?.name ?? "");

  const runsEnded = new Counter({
    name: "loopd_runs_ended_total",
    help: "Runs that ended, by status, stop reason and agent (empty for runs without one)",
    labelNames: ["status", "stop_reason", "agent"],
    registers,
  });
  const countPause = createPauseCounters(registers);
  const modelCalls = new Counter({
    name: "loopd_model_calls_total",
    help: "Model calls (steps), by provider, model, outcome (the model's stop reason, or error) and agent",
    labelNames: ["provider", "model", "outcome", "agent"],
    registers,
  });
  const tokens = new Counter({
    name: "loopd_tokens_total",
    help: "Tokens used by model calls, by provider, model, type (input, output, cache_read, cache_write) and agent",
    labelNames: ["provider", "model", "type", "agent"],
    registers,
  });
  const cost = new Counter({
    name: "loopd_cost_usd_total",
    help: "What model calls cost in USD, by provider, model (models with a price only) and agent",
    labelNames: ["provider", "model", "agent"],
    registers,
  });
  const histogram = <L extends string>(name: string, help: string, labelNames: L[], buckets: number[]) =>
    new Histogram({ name, help, labelNames, buckets, registers });
  const modelCallSeconds = histogram(
    "loopd_model_call_duration_seconds",
    "Model call latency, retries included, by provider, model and outcome (ok or error)",
    ["provider", "model", "outcome"],
    MODEL_CALL_BUCKETS,
  );
  const firstTokenSeconds = histogram(
    "loopd_model_time_to_first_token_seconds",
    "From a model call's start to the first streamed piece of its answer, by provider and model",
    ["provider", "model"],
    FIRST_TOKEN_BUCKETS,
  );
  const toolCallSeconds = histogram(
    "loopd_tool_call_duration_seconds",
    "Tool call latency, by tool, its source (builtin, http, mcp, command), its MCP server (empty for the other sources) and outcome (ok, error, timeout, cancelled)",
    ["tool", "source", "server", "outcome"],
    TOOL_CALL_BUCKETS,
  );
  const retentionDeleted = new Counter({
    name: "loopd_retention_deleted_conversations_total",
    help: "Conversations the retention sweep (RETENTION_DAYS) deleted",
    registers,
  });
  const webhookDeliveries = new Counter({
    name: "loopd_webhook_deliveries_total",
    help: "Webhook deliveries settled, by status (delivered, or failed after WEBHOOK_MAX_ATTEMPTS)",
    labelNames: ["status"],
    registers,
  });
  const webhookFailures = new Counter({
    name: "loopd_webhook_attempt_failures_total",
    help: "Webhook tries that did not deliver, by reason (http_error, redirect, timeout, unreachable, refused)",
    labelNames: ["reason"],
    registers,
  });
  const serverRestarts = new Counter({
    name: "loopd_mcp_server_restarts_total",
    help: "Times an MCP server was started again after it exited, dropped or failed to start, by server",
    labelNames: ["server"],
    registers,
  });

  const onEvent = (agent: string, e: AgentEvent) => {
    modelMetrics.onEvent(e);
    switch (e.type) {
      case "model_call.finished": {
        const labels = { provider: e.provider, model: modelLabel(e.model) };
        modelCalls.inc({ ...labels, outcome: e.stop_reason, agent });
        for (const [type, n] of usageCounts(e.usage)) tokens.inc({ ...labels, type, agent }, n);
        if (e.cost_usd !== null) cost.inc({ ...labels, agent }, e.cost_usd);
        modelCallSeconds.observe({ ...labels, outcome: "ok" }, e.duration_ms / 1000);
        if (e.ttft_ms !== null) firstTokenSeconds.observe(labels, e.ttft_ms / 1000);
        return;
      }
      case "context.summary": {
        // A summary call is billed like any other: its tokens and cost count.
        const labels = { provider: e.provider, model: modelLabel(e.model) };
        modelCalls.inc({ ...labels, outcome: e.error === null ? "summary" : "error", agent });
        if (e.usage) for (const [type, n] of usageCounts(e.usage)) tokens.inc({ ...labels, type, agent }, n);
        if (e.cost_usd !== null) cost.inc({ ...labels, agent }, e.cost_usd);
        modelCallSeconds.observe({ ...labels, outcome: e.error === null ? "ok" : "error" }, e.duration_ms / 1000);
        return;
      }
      case "model_call.failed": {
        const labels = { provider: e.provider, model: modelLabel(e.model), outcome: "error" };
        modelCalls.inc({ ...labels, agent });
        modelCallSeconds.observe(labels, e.duration_ms / 1000);
        return;
      }
      case "tool_call.completed": {
        const tool = describeTool(e.name);
        const labels = tool
          ? { tool: e.name, source: tool.source, server: tool.server ?? "" }
          : { tool: OTHER_LABEL, source: OTHER_LABEL, server: "" };
        toolCallSeconds.observe({ ...labels, outcome: e.status }, e.duration_ms / 1000);
        return;
      }
      default:
        return;
    }
  };
  // Metrics keep no state per run: the runs of one agent share one observer.
  const observers = new Map<string, RunObserver>();
  const observerOf = (agent: string) => {
    let observer = observers.get(agent);
    if (!observer) observers.set(agent, (observer = { onEvent: (e) => onEvent(agent, e), end: () => {} }));
    return observer;
  };

  return {
    registry,
    telemetry: {
      runStarted: (run) => observerOf(agentOf(run)),
      runEnded(run) {
        if (!countPause(run.status))
          runsEnded.inc({ status: run.status, stop_reason: run.stopReason ?? "none", agent: agentOf(run) });
      },
      flush: async () => {},
      close: async () => {},
    },
    watch: (sources) => watchState(registry, sources),
    serverRestarted: (server) => serverRestarts.inc({ server }),
    retentionDeleted: (count) => retentionDeleted.inc(count),
    webhookAttempted: (outcome) => void (outcome !== "delivered" && webhookFailures.inc({ reason: outcome })),
    webhookSettled: (status) => webhookDeliveries.inc({ status }),
  };
}

/** A call's tokens by the `type` label of `loopd_tokens_total`. */
const usageCounts = (u: Usage): [string, number][] => [
  ["input", u.input_tokens],
  ["output", u.output_tokens],
  ["cache_read", u.cache_read_tokens],
  ["cache_write", u.cache_write_tokens],
];
