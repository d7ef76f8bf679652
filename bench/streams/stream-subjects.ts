import { readFileSync } from "node:fs";
import { createBenchDatabase, type BenchDatabase } from "../lib/bench-database.js";
import type { FloorRequest } from "../lib/floor-loop.js";
import { startLoopdProcess, type LoopdProcess } from "../lib/start-loopd-process.js";
import { startRoundRobinProxy } from "./round-robin-proxy.js";
import { startStreamFloor } from "./start-stream-floor.js";

export type StreamSubjectName = "floor" | "no-db floor" | "loopd" | "loopd before" | "loopd ×2" | "loopd before ×2";

/** Connections a pool handed out, and the time their askers waited for them in all. */
export interface PoolWait {
  acquired: number;
  waitedMs: number;
}

/** Something streams sends streaming runs to: one URL, the processes behind it, its own database. */
export interface StreamSubject {
  name: StreamSubjectName;
  url: string;
  pids: number[];
  database: BenchDatabase;
  /** So far; null where the version does not tell (a loopd before the pool counted its waits). */
  poolWait(): Promise<PoolWait | null>;
  /** loopd's V8 heap now (MB, its processes summed, from /metrics), to read RSS against; absent for the floor. */
  heap?(): Promise<{ totalMb: number; usedMb: number }>;
  stop(): Promise<void>;
}

/** Resident memory of a process (MB), from /proc; NaN once it has exited. */
export function rssMbOf(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Number(kb) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** A loopd's /metrics, read by name: null where it has none. */
async function loopdMetrics(url: string): Promise<(name: string) => number | null> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return (name) => {
    const value = new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1];
    return value === undefined ? null : Number(value);
  };
}

/** A loopd's pool counters; null when it has none (on PGlite, or an older loopd). */
async function loopdPoolWait(url: string): Promise<PoolWait | null> {
  const read = await loopdMetrics(url);
  const acquired = read("loopd_db_pool_acquisitions_total");
  const waited = read("loopd_db_pool_wait_seconds_total");
  return acquired === null || waited === null ? null : { acquired, waitedMs: waited * 1000 };
}

async function loopdHeap(url: string): Promise<{ totalMb: number; usedMb: number }> {
  const read = await loopdMetrics(url);
  return {
    totalMb: (read("nodejs_heap_size_total_bytes") ?? Number.NaN) / 2 ** 20,
    usedMb: (read("nodejs_heap_size_used_bytes") ?? Number.NaN) / 2 ** 20,
  };
}

const sumWaits = (waits: Array<PoolWait | null>): PoolWait | null =>
  waits.some((w) => w === null)
    ? null
    : { acquired: waits.reduce((s, w) => s + w!.acquired, 0), waitedMs: waits.reduce((s, w) => s + w!.waitedMs, 0) };

/**
 * One loopd, or `instances` of them on one database behind a round-robin
 * proxy (on Postgres: the multi-instance path, a run's followers on another
 * instance than its owner).
 */
export async function startLoopdStreamSubject({
  name,
  serverUrl,
  env,
  checkout,
  instances = 1,
}: {
  name: StreamSubjectName;
  serverUrl: string | undefined;
  env: Record<string, string>;
  checkout?: string | undefined;
  instances?: number;
}): Promise<StreamSubject> {
  const database = await createBenchDatabase(serverUrl);
  const loopds: LoopdProcess[] = [];
  try {
    // One after the other: the first migrates the database.
    for (let i = 0; i < instances; i++)
      loopds.push(await startLoopdProcess({ env: { ...env, ...database.env }, ...(checkout && { checkout }) }));
  } catch (err) {
    for (const loopd of loopds) await loopd.stop();
    await database.drop();
    throw err;
  }
  const proxy = instances > 1 ? await startRoundRobinProxy(loopds.map((l) => l.url)) : null;
  return {
    name,
    url: proxy?.url ?? loopds[0]!.url,
    pids: loopds.map((l) => l.pid),
    database,
    poolWait: async () => sumWaits(await Promise.all(loopds.map((l) => loopdPoolWait(l.url)))),
    async heap() {
      const heaps = await Promise.all(loopds.map((l) => loopdHeap(l.url)));
      return { totalMb: heaps.reduce((s, h) => s + h.totalMb, 0), usedMb: heaps.reduce((s, h) => s + h.usedMb, 0) };
    },
    async stop() {
      await proxy?.close();
      for (const loopd of loopds) await loopd.stop();
      await database.drop();
    },
  };
}

/**
 * The concurrent floor (stream-floor-server.ts) on a database of its own,
 * sending loopd's very request; `noDatabase`: the same server saving nothing
 * (its database created all the same, left unopened).
 */
export async function startFloorStreamSubject({
  serverUrl,
  llmUrl,
  request,
  noDatabase = false,
}: {
  serverUrl: string | undefined;
  llmUrl: string;
  request: FloorRequest;
  noDatabase?: boolean;
}): Promise<StreamSubject> {
  const database = await createBenchDatabase(serverUrl);
  const floor = await startStreamFloor({ llmUrl, database: database.open, request, noDatabase });
  return {
    name: noDatabase ? "no-db floor" : "floor",
    url: floor.url,
    pids: [floor.pid],
    database,
    async poolWait() {
      const { poolWaitMs } = await floor.stats();
      return { acquired: poolWaitMs.count, waitedMs: poolWaitMs.sum };
    },
    async stop() {
      await floor.stop();
      await database.drop();
    },
  };
}
