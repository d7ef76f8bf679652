import os from "node:os";
import type { Pgbouncer } from "../../test/support/helpers/pgbouncer.js";
import { percentile } from "../lib/measure.js";
import { difference } from "../lib/measure-window.js";
import { watchBackendsCpu } from "../lib/postgres-backends-cpu.js";
import { cpuMsOf, machineBusyMs } from "../lib/proc-cpu.js";
import type { ServerMonitor } from "../lib/server-monitor.js";
import { startFleet, type Via } from "./instance-fleet.js";
import { createConversations, streamedRun } from "./streamed-run.js";

/** What one instance did over a window, per second: its statements, its lease renewals and takeover sweeps, the NOTIFYs it heard. */
export interface InstanceTraffic {
  statements: number;
  leaseRenewals: number;
  takeovers: number;
  notifications: number;
}

/** Which windows `measureInstances` measures, and their load. */
export interface InstanceWindows {
  /** Instance counts, a row each. @default 1,2,3 */
  counts: number[];
  vias: Via[];
  rounds: number;
  /** Streaming runs started at once. */
  concurrency: number;
  /** Tool steps per run. */
  steps: number;
  /** Warm-up runs per instance before the window. */
  warmup: number;
}

export interface InstancesRow {
  round: number;
  via: Via;
  instances: number;
  runs: number;
  /** Why runs did not complete, counted. */
  failures: Record<string, number>;
  runsPerSecond: number;
  stepsPerSecond: number;
  ttfeP50: number;
  ttfeP99: number;
  /** CPU per completed run: loopd's processes (all of them), Postgres's backends of the database, pgbouncer (ms). */
  loopdMsPerRun: number;
  backendsMsPerRun: number;
  pgbouncerMsPerRun: number;
  /** Model calls: a step here. */
  steps: number;
  /** This database's WAL (pg_walinspect), and the server's whole WAL over the window. */
  walBytes: number;
  serverWalBytes: number;
  statements: number;
  transactions: number;
  perInstance: InstanceTraffic[];
  /** The machine's cores busy over the window, all work included (%). */
  machineBusy: number;
  load1: number;
}

/**
 * N loopd instances behind the round-robin proxy, `concurrency` streaming
 * runs started at once through it, each `steps` tool steps: one window per
 * (N, via) in a round, every subject started afresh (its own database) so
 * that no two hold connections at once. `vias` alternate inside a round.
 */
export async function measureInstances({
  serverUrl,
  calls,
  bouncer,
  monitor,
  counts,
  vias,
  rounds,
  concurrency,
  steps,
  warmup,
  env,
  progress,
}: {
  serverUrl: string;
  calls: () => number;
  bouncer: Pgbouncer;
  monitor: ServerMonitor;
  env: Record<string, string>;
  progress: (line: string) => void;
} & InstanceWindows): Promise<InstancesRow[]> {
  const rows: InstancesRow[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const count of counts) {
      // The order alternates by round: no way always measures on a machine another just warmed.
      for (const via of round % 2 === 1 ? vias : [...vias].reverse()) {
        progress(
          `scale: ${count} instance(s), ${via}, ${concurrency} streaming runs of ${steps} tool steps (round ${round}/${rounds})`,
        );
        const fleet = await startFleet({ serverUrl, via, count, bouncer, env });
        try {
          const url = fleet.proxy.url;
          const maxSteps = steps + 2;
          // Warm-up, `warmup` runs per instance: connections opened, code paths compiled in every process.
          await Promise.all(
            (await createConversations(url, warmup * count)).map((id) =>
              streamedRun({ url, conversationId: id, maxSteps }),
            ),
          );
          const conversations = await createConversations(url, concurrency);
          await monitor.checkpoint();
          const lsn = await fleet.wal?.mark();
          const serverLsn = await monitor.walInsertLsn();
          const backends = watchBackendsCpu({
            postmasterPid: monitor.postmasterPid!,
            databaseName: fleet.database.name,
            ignorePids: [monitor.backendPid],
          });
          const pids = fleet.instances.map((i) => i.loopd.pid);
          const bouncerPid = via === "direct" ? null : bouncer.pid();
          const cpuBefore = pids.map((pid) => cpuMsOf(pid) ?? 0);
          const bouncerBefore = bouncerPid ? (cpuMsOf(bouncerPid) ?? 0) : 0;
          const wiresBefore = fleet.instances.map((i) => i.counts());
          const busyBefore = machineBusyMs();
          const callsBefore = calls();
          const started = performance.now();

          const results = await Promise.all(
            conversations.map((id) => streamedRun({ url, conversationId: id, maxSteps })),
          );

          const wallMs = performance.now() - started;
          const stepsDone = calls() - callsBefore;
          const loopdMs = pids.reduce((sum, pid, i) => sum + (cpuMsOf(pid) ?? 0) - cpuBefore[i]!, 0);
          const bouncerMs = bouncerPid ? (cpuMsOf(bouncerPid) ?? 0) - bouncerBefore : 0;
          const backendsMs = backends.stop().ownMs;
          const busyMs = machineBusyMs() - busyBefore;
          const traffic = fleet.instances.map((i, n) => difference(i.counts(), wiresBefore[n]!));
          const wal = lsn && fleet.wal ? await fleet.wal.bytesSince(lsn).catch(() => null) : null;
          const serverWal = await monitor.walBytesSince(serverLsn);
          const completed = results.filter((r) => r.end === "run.completed").length;
          const failures: Record<string, number> = {};
          for (const r of results) if (r.end !== "run.completed") failures[r.end] = (failures[r.end] ?? 0) + 1;
          const ttfe = results.flatMap((r) => (r.ttfe === null ? [] : [r.ttfe])).sort((a, b) => a - b);
          const perSecond = (n: number) => (n / wallMs) * 1000;
          rows.push({
            round,
            via,
            instances: count,
            runs: results.length,
            failures,
            runsPerSecond: perSecond(completed),
            stepsPerSecond: perSecond(stepsDone),
            ttfeP50: percentile(ttfe, 0.5),
            ttfeP99: percentile(ttfe, 0.99),
            loopdMsPerRun: loopdMs / completed,
            backendsMsPerRun: backendsMs / completed,
            pgbouncerMsPerRun: bouncerMs / completed,
            steps: stepsDone,
            walBytes: wal?.bytes ?? Number.NaN,
            serverWalBytes: serverWal,
            statements: traffic.reduce((sum, t) => sum + t.statements, 0),
            transactions: traffic.reduce((sum, t) => sum + t.transactions, 0),
            perInstance: traffic.map((t) => ({
              statements: perSecond(t.statements),
              leaseRenewals: perSecond(t.kinds.leaseRenewals ?? 0),
              takeovers: perSecond(t.kinds.takeovers ?? 0),
              notifications: perSecond(t.notifications),
            })),
            machineBusy: (busyMs / (wallMs * os.cpus().length)) * 100,
            load1: os.loadavg()[0] ?? Number.NaN,
          });
          progress(`  ${completed}/${results.length} completed, ${perSecond(completed).toFixed(1)} runs/s`);
        } finally {
          await fleet.stop();
        }
      }
    }
  }
  return rows;
}
