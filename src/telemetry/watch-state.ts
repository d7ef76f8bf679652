import { Counter, Gauge, type Registry } from "prom-client";
import type { PoolUse } from "../store/db.js";

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

/** The gauges and counters read from the app's state when /metrics is scraped (nothing is sampled in between). */
export function watchState(registry: Registry, sources: MetricsSources): void {
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
