import { openAiOnFakeLlm } from "../lib/start-loopd-process.js";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { startPgbouncer } from "../../test/support/helpers/pgbouncer.js";
import { markdownTable } from "../lib/markdown-table.js";
import { openServerMonitor } from "../lib/server-monitor.js";
import { measureInstances, type InstancesRow, type InstanceWindows } from "./instances.js";
import { measureKillOne, type KillRow } from "./kill-one.js";
import { answerToolSteps, TOOL_FILE, writeToolFile } from "./streamed-run.js";

/** The scale section's knobs, from BENCH_SCALE_* (bench/README.md). */
export interface ScaleOptions extends InstanceWindows {
  /** The kill-one-of-three windows' length (s); 0 leaves them out. */
  killSeconds: number;
  killConcurrency: number;
  /** RUN_LEASE_MS of the kill-one-of-three instances. */
  killLeaseMs: number;
  /** pgbouncer's default_pool_size per instance. */
  bouncerPoolPerInstance: number;
}

/**
 * scale: N = 1, 2, 3 loopd instances on one Postgres behind a round-robin
 * proxy, straight to Postgres and through pgbouncer in transaction mode, the
 * same streaming runs; then one of three killed under load. Postgres only.
 * Returns the section's markdown.
 */
export async function measureScale({
  serverUrl,
  logLevel,
  options: o,
  progress,
}: {
  serverUrl: string;
  logLevel: string;
  options: ScaleOptions;
  progress: (line: string) => void;
}): Promise<string[]> {
  const llm = await startFakeLlm();
  const { calls } = answerToolSteps(llm, o.steps);
  const bouncer = await startPgbouncer(serverUrl, { poolSize: o.bouncerPoolPerInstance * Math.max(3, ...o.counts) });
  // On the server's `postgres` database: tests sharing the server end connections to theirs.
  const monitorUrl = new URL(serverUrl);
  monitorUrl.pathname = "/postgres";
  const monitor = await openServerMonitor(monitorUrl.toString());
  const workspace = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-scale-"));
  writeToolFile(workspace);
  const env = {
    WORKSPACE_DIR: workspace,
    ...openAiOnFakeLlm(llm.url),
    LOG_LEVEL: logLevel,
    MAX_STEPS: String(o.steps + 2),
    MAX_STEPS_LIMIT: String(o.steps + 2),
  };
  try {
    const rows = await measureInstances({ serverUrl, calls, bouncer, monitor, ...o, env, progress });
    const kills =
      o.killSeconds > 0
        ? await measureKillOne({
            serverUrl,
            via: "pgbouncer",
            bouncer,
            concurrency: o.killConcurrency,
            seconds: o.killSeconds,
            steps: o.steps,
            env: { ...env, RUN_LEASE_MS: String(o.killLeaseMs) },
            progress,
          })
        : [];
    return [
      `## scale: N loopd instances on one Postgres behind a round-robin proxy, direct and through pgbouncer (transaction mode): ${o.concurrency} streaming runs at once, ${o.steps} tool steps each (${o.rounds} round(s))`,
      "",
      `Each (N, via) in a round starts afresh: a database of its own, N loopd processes (\`node dist/main.js\`, DB_POOL_SIZE 10 each), the proxy (\`bench/streams/round-robin-proxy.ts\`); pgbouncer ${"`pool_mode = transaction`"}, default_pool_size ${o.bouncerPoolPerInstance * Math.max(3, ...o.counts)}, \`pgbouncer\` with DATABASE_DIRECT_URL for LISTEN, \`pgbouncer, polling\` without (LISTEN not delivered: POLL_INTERVAL_MS 500). ${o.warmup} runs of warm-up per instance, then the ${o.concurrency} measured runs, each a tool step ${o.steps} times (\`read_file\` of \`${TOOL_FILE}\`, 2,000 bytes: a result of about 2 KB) then an answer: ${o.steps + 1} model calls, a step each here. CPU from /proc: loopd's processes, the Postgres backends of the database (pgbouncer's server connections included), pgbouncer's process. WAL: the database's own records (pg_walinspect), the server's in all beside it. Statements, transactions, lease renewals, takeover sweeps and NOTIFYs heard: counted on the wire by a relay in front of each instance's connections.`,
      "",
      markdownTable(INSTANCE_COLUMNS, rows.map(instanceCells)),
      "",
      "Per instance, per second of the window (one value per instance): statements, lease renewals, takeover sweeps, NOTIFYs heard.",
      "",
      markdownTable(
        ["round", "via", "N", "statements/s", "lease renewals/s", "takeover sweeps/s", "NOTIFYs heard/s"],
        rows.map((r) => [
          String(r.round),
          r.via,
          String(r.instances),
          ...(["statements", "leaseRenewals", "takeovers", "notifications"] as const).map((k) =>
            r.perInstance.map((t) => t[k].toFixed(1)).join(" · "),
          ),
        ]),
      ),
      ...(kills.length > 0
        ? [
            "",
            `### kill one of three: ${o.killConcurrency} streaming runs kept in flight for ${o.killSeconds} s through pgbouncer; in the second window one instance SIGKILLed at ${(o.killSeconds / 3).toFixed(0)} s (RUN_LEASE_MS ${o.killLeaseMs})`,
            "",
            "The same three instances for both windows. Others: runs started on the two other instances from the kill's moment on (in the unkilled window, from the same moment). Cut: streams the kill broke; their clients read the run through the proxy until it ended. Takeover: from the kill to a cut run seen ended (polled every 250 ms).",
            "",
            markdownTable(KILL_COLUMNS, kills.map(killCells)),
          ]
        : []),
    ];
  } finally {
    await monitor.close();
    await bouncer.close();
    await llm.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

const INSTANCE_COLUMNS = [
  "round",
  "via",
  "N",
  "runs",
  "failed",
  "runs/s",
  "steps/s",
  "first event p50 · p99 ms",
  "loopd CPU ms/run",
  "Postgres CPU ms/run",
  "pgbouncer CPU ms/run",
  "Postgres CPU ms/step",
  "WAL B/step (db · server)",
  "statements/step",
  "transactions/step",
  "machine busy %",
];

function instanceCells(r: InstancesRow): string[] {
  const failed = Object.entries(r.failures).map(([why, n]) => `${why} ×${n}`);
  return [
    String(r.round),
    r.via,
    String(r.instances),
    String(r.runs),
    failed.join(", ") || "0",
    r.runsPerSecond.toFixed(1),
    r.stepsPerSecond.toFixed(0),
    `${r.ttfeP50.toFixed(0)} · ${r.ttfeP99.toFixed(0)}`,
    r.loopdMsPerRun.toFixed(1),
    r.backendsMsPerRun.toFixed(1),
    r.via === "direct" ? "–" : r.pgbouncerMsPerRun.toFixed(1),
    ((r.backendsMsPerRun * r.runs) / r.steps).toFixed(2),
    `${Math.round(r.walBytes / r.steps)} · ${Math.round(r.serverWalBytes / r.steps)}`,
    (r.statements / r.steps).toFixed(2),
    (r.transactions / r.steps).toFixed(2),
    r.machineBusy.toFixed(0),
  ];
}

const KILL_COLUMNS = [
  "window",
  "runs started",
  "completed",
  "runs/s",
  "others' runs",
  "others' first event p50 · p99 ms",
  "others' streams cut or not completed",
  "cut",
  "cut, then completed",
  "cut before the run existed",
  "takeover p50 · max s",
  "ends other than run.completed",
];

function killCells(r: KillRow): string[] {
  const failed = Object.entries(r.failures).map(([why, n]) => `${why} ×${n}`);
  return [
    r.window,
    String(r.started),
    String(r.completed),
    r.runsPerSecond.toFixed(1),
    String(r.othersRuns),
    `${r.othersTtfeP50.toFixed(0)} · ${r.othersTtfeP99.toFixed(0)}`,
    String(r.othersNotWhole),
    String(r.cut),
    String(r.cutCompleted),
    String(r.cutNeverStarted),
    r.cut > 0 ? `${(r.takeoverP50 / 1000).toFixed(1)} · ${(r.takeoverMax / 1000).toFixed(1)}` : "–",
    failed.join(", ") || "–",
  ];
}
