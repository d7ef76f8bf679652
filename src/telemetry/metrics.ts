import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { AgentEvent } from "../core/agent-events.js";
import type { Usage } from "../core/usage.js";
import type { PoolUse } from "../store/db.js";
import { boundedLabel, OTHER_LABEL } from "./bounded-label.js";
import type { RunObserver, Telemetry } from "./telemetry.js";

/** What the gauges read when /metrics is scraped (nothing is sampled in between). */
export interface MetricsSources {
  /** Runs executing in this process. */
  activeRuns(): number;
  /** Runs waiting for the application, in the whole database. */
  pausedRuns(): Promise<number>;
  /** SSE streams this process holds open. */
  openStreams(): number;
  /** The database pool's connections; null when embedded (no pool). */
  poolUse(): PoolUse | null;
  /** How long the oldest webhook delivery still pending has waited (ms), in the whole database; null: none pending. */
  oldestPendingWebhookMs(): Promise<number | null>;
  /** Model calls that waited for requests that start runs to be taken (`Intake`), and how long in all (ms). */
  heldModelCalls(): { calls: number; ms: number };
}

export interface MetricsOptions {
  /** Where a registered tool comes from (its source and MCP server); undefined for a name a model made up, counted as `_other`. */
  describeTool: (name: string) => { source: string; server: string | null } | undefined;
  /** Distinct model names kept as label values, per metric family; past it, `_other`. @default 100 */
  maxModels?: number;
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
export function createMetrics({ describeTool, maxModels = 100 }: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const modelLabel = boundedLabel(maxModels);

  const runsEnded = new Counter({
    name: "loopd_runs_ended_total",
    help: "Runs that ended, by status and stop reason",
    labelNames: ["status", "stop_reason"],
    registers,
  });
  const runsPausedTotal = new Counter({
    name: "loopd_run_pauses_total",
    help: "Times a run paused to wait for the application (requires_action)",
    registers,
  });
  const modelCalls = new Counter({
    name: "loopd_model_calls_total",
    help: "Model calls (steps), by provider, model and outcome (the model's stop reason, or error)",
    labelNames: ["provider", "model", "outcome"],
    registers,
  });
  const tokens = new Counter({
    name: "loopd_tokens_total",
    help: "Tokens used by model calls, by provider, model and type (input, output, cache_read, cache_write)",
    labelNames: ["provider", "model", "type"],
    registers,
  });
  const cost = new Counter({
    name: "loopd_cost_usd_total",
    help: "What model calls cost in USD, by provider and model (models with a price only)",
    labelNames: ["provider", "model"],
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

  const onEvent = (e: AgentEvent) => {
    switch (e.type) {
      case "model_call.finished": {
        const labels = { provider: e.provider, model: modelLabel(e.model) };
        modelCalls.inc({ ...labels, outcome: e.stop_reason });
        for (const [type, n] of usageCounts(e.usage)) tokens.inc({ ...labels, type }, n);
        if (e.cost_usd !== null) cost.inc(labels, e.cost_usd);
        modelCallSeconds.observe({ ...labels, outcome: "ok" }, e.duration_ms / 1000);
        if (e.ttft_ms !== null) firstTokenSeconds.observe(labels, e.ttft_ms / 1000);
        return;
      }
      case "context.summary": {
        // A summary call is billed like any other: its tokens and cost count.
        const labels = { provider: e.provider, model: modelLabel(e.model) };
        modelCalls.inc({ ...labels, outcome: e.error === null ? "summary" : "error" });
        if (e.usage) for (const [type, n] of usageCounts(e.usage)) tokens.inc({ ...labels, type }, n);
        if (e.cost_usd !== null) cost.inc(labels, e.cost_usd);
        modelCallSeconds.observe({ ...labels, outcome: e.error === null ? "ok" : "error" }, e.duration_ms / 1000);
        return;
      }
      case "model_call.failed": {
        const labels = { provider: e.provider, model: modelLabel(e.model), outcome: "error" };
        modelCalls.inc(labels);
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
  // Metrics keep no state per run: every run shares one observer.
  const observer: RunObserver = { onEvent, end: () => {} };

  return {
    registry,
    telemetry: {
      runStarted: () => observer,
      runEnded({ status, stopReason }) {
        if (status === "requires_action") runsPausedTotal.inc();
        else runsEnded.inc({ status, stop_reason: stopReason ?? "none" });
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

function watchState(registry: Registry, sources: MetricsSources): void {
  const registers = [registry];
  new Gauge({
    name: "loopd_runs_active",
    help: "Runs executing in this process",
    registers,
    collect() {
      this.set(sources.activeRuns());
    },
  });
  /** A gauge read from the database at each scrape. */
  const databaseGauge = (name: string, help: string, read: () => Promise<number>) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        try {
          this.set(await read());
        } catch {
          // The database is unreachable: no value rather than a stale one, and the rest of the scrape still answers.
          this.reset();
        }
      },
    });
  databaseGauge(
    "loopd_runs_paused",
    "Runs waiting for the application (requires_action), in the whole database",
    sources.pausedRuns,
  );
  databaseGauge(
    "loopd_webhook_oldest_pending_seconds",
    "Age of the oldest webhook delivery not yet delivered nor given up, in the whole database (0: none pending)",
    async () => ((await sources.oldestPendingWebhookMs()) ?? 0) / 1000,
  );
  new Gauge({
    name: "loopd_sse_streams_open",
    help: "SSE streams this process holds open",
    registers,
    collect() {
      this.set(sources.openStreams());
    },
  });
  // Counters kept elsewhere: read at each scrape.
  const readCounter = (name: string, help: string, read: () => number | null) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        const value = read();
        if (value === null) return;
        this.reset();
        this.inc(value);
      },
    });
  readCounter(
    "loopd_model_calls_held_total",
    "Model calls that waited while requests that start runs were being taken (INTAKE_PRIORITY_MS)",
    () => sources.heldModelCalls().calls,
  );
  readCounter(
    "loopd_model_calls_held_seconds_total",
    "Time model calls waited while requests that start runs were being taken, summed",
    () => sources.heldModelCalls().ms / 1000,
  );
  if (sources.poolUse() === null) return;
  new Gauge({
    name: "loopd_db_pool_connections",
    help: "Connections of the database pool, by state (total, idle), and queries waiting for one (waiting)",
    labelNames: ["state"],
    registers,
    collect() {
      const use = sources.poolUse();
      if (!use) return;
      this.set({ state: "total" }, use.total);
      this.set({ state: "idle" }, use.idle);
      this.set({ state: "waiting" }, use.waiting);
    },
  });
  // Counters kept by the pool itself.
  const poolCounter = (name: string, help: string, read: (use: PoolUse) => number) =>
    readCounter(name, help, () => {
      const use = sources.poolUse();
      return use && read(use);
    });
  poolCounter("loopd_db_pool_acquisitions_total", "Connections the database pool handed out", (use) => use.acquired);
  poolCounter(
    "loopd_db_pool_wait_seconds_total",
    "Time spent waiting for a connection of the database pool, summed over every acquisition",
    (use) => use.waitedMs / 1000,
  );
}

/** A call's tokens by the `type` label of `loopd_tokens_total`. */
const usageCounts = (u: Usage): [string, number][] => [
  ["input", u.input_tokens],
  ["output", u.output_tokens],
  ["cache_read", u.cache_read_tokens],
  ["cache_write", u.cache_write_tokens],
];
