import os from "node:os";
import type { PgWireCounter, WireCounts } from "./pg-wire-counter.js";
import { watchBackendsCpu } from "./postgres-backends-cpu.js";
import { cpuMsOf, machineBusyMs } from "./proc-cpu.js";
import type { ServerMonitor } from "./server-monitor.js";

export interface WindowFigures {
  wallMs: number;
  /** CPU of the measured process itself. */
  processCpuMs: number;
  /** CPU of the Postgres backends serving its database; null when not on a local Postgres server. */
  backendsCpuMs: number | null;
  /**
   * Share of the machine's CPU (all cores) busy with anything but the measured
   * process, its backends and the bench itself (the fake LLM, the clients):
   * someone else's work, which competes for the cores and, if it is a client
   * of the same server, writes WAL counted here.
   */
  othersCpuShare: number;
  /** WAL the server wrote meanwhile (all of it: see othersCpuShare). */
  walBytes: number | null;
  wire: WireCounts | null;
  /** 1-minute load average at the window's end. */
  load1: number;
}

/**
 * Measures `work` done by the process `pid` against its own database: wall
 * time, its CPU and its backends' CPU from /proc, the server's WAL, and what
 * crossed the wire. On Postgres the window starts right after a checkpoint,
 * so every subject starts from the same state of full-page images.
 */
export async function measureWindow<T>({
  pid,
  monitor,
  databaseName,
  wire,
  work,
}: {
  pid: number;
  monitor: ServerMonitor | null;
  databaseName: string | undefined;
  wire: PgWireCounter | null;
  work: () => Promise<T>;
}): Promise<{ figures: WindowFigures; result: T }> {
  await monitor?.checkpoint();
  const lsn = await monitor?.walInsertLsn();
  const backends =
    monitor?.postmasterPid && databaseName
      ? watchBackendsCpu({ postmasterPid: monitor.postmasterPid, databaseName, ignorePids: [monitor.backendPid] })
      : null;
  const wireBefore = wire?.counts() ?? null;
  const cpuBefore = cpuMsOf(pid) ?? Number.NaN;
  const benchBefore = cpuMsOf(process.pid) ?? Number.NaN;
  const machineBefore = machineBusyMs();
  const started = performance.now();

  const result = await work();

  const wallMs = performance.now() - started;
  const processCpuMs = (cpuMsOf(pid) ?? Number.NaN) - cpuBefore;
  const benchCpuMs = (cpuMsOf(process.pid) ?? Number.NaN) - benchBefore;
  const machineCpuMs = machineBusyMs() - machineBefore;
  const backendsCpu = backends?.stop() ?? null;
  const walBytes = monitor && lsn ? await monitor.walBytesSince(lsn) : null;
  const wireAfter = wire?.counts() ?? null;
  return {
    result,
    figures: {
      wallMs,
      processCpuMs,
      backendsCpuMs: backendsCpu?.ownMs ?? null,
      othersCpuShare:
        (machineCpuMs - processCpuMs - (backendsCpu?.ownMs ?? 0) - benchCpuMs) / (wallMs * os.cpus().length),
      walBytes,
      wire: wireBefore && wireAfter ? difference(wireAfter, wireBefore) : null,
      load1: os.loadavg()[0] ?? Number.NaN,
    },
  };
}

/** What crossed the wire between two readings of a counter. */
export function difference(after: WireCounts, before: WireCounts): WireCounts {
  return {
    statements: after.statements - before.statements,
    roundTrips: after.roundTrips - before.roundTrips,
    transactions: after.transactions - before.transactions,
    notifications: after.notifications - before.notifications,
    kinds: Object.fromEntries(Object.entries(after.kinds).map(([kind, n]) => [kind, n - (before.kinds[kind] ?? 0)])),
  };
}
