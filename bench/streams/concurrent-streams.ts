import { openAiOnFakeLlm } from "../lib/start-loopd-process.js";
import os from "node:os";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { isEvent, readSse } from "../../test/support/helpers/sse-client.js";
import type { FloorRequest } from "../lib/floor-loop.js";
import { loopdClient } from "../lib/loopd-client.js";
import { percentile } from "../lib/measure.js";
import { watchBackendsCpu, type BackendsCpu } from "../lib/postgres-backends-cpu.js";
import { cpuMsOf } from "../lib/proc-cpu.js";
import { SCENARIOS } from "../lib/run-shapes.js";
import { openServerMonitor, type ServerMonitor } from "../lib/server-monitor.js";
import {
  rssMbOf,
  startFloorStreamSubject,
  startLoopdStreamSubject,
  type StreamSubject,
  type StreamSubjectName,
} from "./stream-subjects.js";

export interface StreamsRow {
  subject: StreamSubjectName;
  /** Runs started at once in each round. */
  concurrency: number;
  runs: number;
  /** Runs that did not answer 200 or did not end with run.completed. */
  failures: number;
  /** Why, counted: "503", "ECONNRESET", "run.failed", … */
  failureReasons: Record<string, number>;
  /** Of the 503s, those that said when to come back (Retry-After). */
  retryAfter: number;
  runsPerSecond: number;
  /** Model calls per second (as the fake saw them). */
  stepsPerSecond: number;
  /** Time to the first and to the last SSE event, from the request's start (ms). */
  ttfeP50: number;
  ttfeP99: number;
  ttleP50: number;
  ttleP99: number;
  /** CPU per completed run (ms): the subject's processes, and the Postgres backends of its database (NaN on PGlite). */
  cpuMsPerRun: number;
  backendsMsPerRun: number;
  /** Mean wait for a pooled connection (ms); NaN where not told. */
  poolWaitMs: number;
  /** Resident memory of its processes after each round (MB). */
  rssMb: number[];
  /** 1-minute load average after its last round. */
  load1: number;
}

interface Tally {
  subject: StreamSubject;
  ttfe: number[];
  ttle: number[];
  failureReasons: Record<string, number>;
  retryAfter: number;
  runs: number;
  calls: number;
  wallMs: number;
  cpuMs: number;
  backendsMs: number;
  waits: { acquired: number; waitedMs: number } | null;
  rss: number[];
}

type Start = (name: StreamSubjectName) => Promise<StreamSubject>;

/**
 * streams: N streaming runs started at once (`stream: true`), each on a
 * conversation of its own, each a tool round trip (model → calculate →
 * model), for each N of `concurrencies`: the concurrent floor, the same
 * floor saving nothing (the loop's physical limit), loopd, an
 * older loopd given `baselineDir`, and on Postgres the same loopds twice
 * behind a round-robin proxy. The subjects take turns round by round, so
 * that all see the same machine.
 */
export async function measureConcurrentStreams({
  serverUrl,
  baselineDir,
  logLevel,
  concurrencies,
  rounds,
  progress,
}: {
  serverUrl: string | undefined;
  baselineDir: string | undefined;
  logLevel: string;
  concurrencies: number[];
  rounds: number;
  progress: (line: string) => void;
}): Promise<StreamsRow[]> {
  const llm = await startFakeLlm();
  let calls = 0;
  let recorded: FloorRequest | null = null;
  const respond = SCENARIOS.tool.respond;
  llm.respond = (req) => {
    calls++;
    recorded ??= floorRequestOf(req.body);
    llm.requests.length = 0;
    return respond(req);
  };
  const env = {
    ...openAiOnFakeLlm(llm.url),
    LOG_LEVEL: logLevel,
  };
  const monitor: ServerMonitor | null = serverUrl ? await openServerMonitor(serverUrl) : null;
  const kind = serverUrl ? "postgres" : "pglite";
  const rows: StreamsRow[] = [];
  try {
    for (const concurrency of concurrencies) {
      const subjects: StreamSubject[] = [];
      const start: Start = async (name) => {
        const checkout = name.startsWith("loopd before") ? baselineDir : undefined;
        const instances = name.endsWith("×2") ? 2 : 1;
        const subject =
          name === "floor" || name === "no-db floor"
            ? await startFloorStreamSubject({
                serverUrl,
                llmUrl: llm.url,
                request: recorded!,
                noDatabase: name === "no-db floor",
              })
            : await startLoopdStreamSubject({ name, serverUrl, env, checkout, instances });
        subjects.push(subject);
        // Warm-up: every pooled connection opened, the code paths compiled.
        await streamRound(subject.url, 20);
        return subject;
      };
      try {
        // loopd first: its first request is the floor's to send.
        const names: StreamSubjectName[] = [
          "loopd",
          "floor",
          "no-db floor",
          ...(baselineDir ? ["loopd before" as const] : []),
        ];
        // BENCH_STREAM_PAIRS=0 leaves the two-instance rows out (to measure one change quickly).
        if (serverUrl && process.env.BENCH_STREAM_PAIRS !== "0")
          names.push("loopd ×2", ...(baselineDir ? ["loopd before ×2" as const] : []));
        const tallies: Tally[] = [];
        for (const name of names) tallies.push(emptyTally(await start(name)));
        for (let round = 1; round <= rounds; round++) {
          for (const tally of tallies) {
            progress(
              `${kind}: ${tally.subject.name}, ${concurrency} streaming runs at once (round ${round}/${rounds})`,
            );
            const ttfe = await measuredRound(tally, concurrency, { monitor, calls: () => calls });
            // Round 1 opens most of its connections anew (the warm-up opened 20), and Node takes one new connection per turn of its event loop: its tail is there.
            progress(
              `  ${tally.subject.name}: first event p50 · p99 ${percentile(ttfe, 0.5).toFixed(0)} · ${percentile(ttfe, 0.99).toFixed(0)} ms in this round`,
            );
            // RSS follows the V8 heap's size, which grows with garbage until a major GC: what the heap holds says which.
            const heap = await tally.subject.heap?.();
            if (heap)
              progress(
                `  ${tally.subject.name}: RSS ${tally.rss.at(-1)!.toFixed(0)} MB, V8 heap ${heap.totalMb.toFixed(0)} MB of which ${heap.usedMb.toFixed(0)} MB in use (live or not yet collected)`,
              );
          }
        }
        rows.push(...tallies.map((t) => rowOf(t, concurrency)));
      } finally {
        for (const subject of subjects) await subject.stop();
      }
    }
    return rows;
  } finally {
    await monitor?.close();
    await llm.close();
  }
}

const emptyTally = (subject: StreamSubject): Tally => ({
  subject,
  ttfe: [],
  ttle: [],
  failureReasons: {},
  retryAfter: 0,
  runs: 0,
  calls: 0,
  wallMs: 0,
  cpuMs: 0,
  backendsMs: 0,
  waits: { acquired: 0, waitedMs: 0 },
  rss: [],
});

/** loopd's request as the fake received it: what the floor sends besides its history. */
function floorRequestOf(body: Record<string, unknown>): FloorRequest {
  const { messages, ...params } = body as FloorRequest["params"] & { messages: Array<{ role: string }> };
  return { params, system: messages.filter((m) => m.role === "system") as FloorRequest["system"] };
}

/** One round of `concurrency` runs, added to the tally; its times to the first event, sorted. */
async function measuredRound(
  tally: Tally,
  concurrency: number,
  { monitor, calls }: { monitor: ServerMonitor | null; calls: () => number },
): Promise<number[]> {
  const { subject } = tally;
  const conversations = await createConversations(subject.url, concurrency);
  const cpuBefore = subject.pids.map((pid) => cpuMsOf(pid) ?? 0);
  const waitsBefore = await subject.poolWait();
  const backends =
    monitor?.postmasterPid && subject.database.name
      ? watchBackendsCpu({
          postmasterPid: monitor.postmasterPid,
          databaseName: subject.database.name,
          ignorePids: [monitor.backendPid],
        })
      : null;
  const callsBefore = calls();
  const result = await streamRun(subject.url, conversations);
  const used: BackendsCpu | null = backends?.stop() ?? null;
  tally.calls += calls() - callsBefore;
  tally.cpuMs += subject.pids.reduce((sum, pid, i) => sum + (cpuMsOf(pid) ?? 0) - cpuBefore[i]!, 0);
  tally.backendsMs += used?.ownMs ?? Number.NaN;
  const waitsAfter = await subject.poolWait();
  tally.waits =
    tally.waits && waitsBefore && waitsAfter
      ? {
          acquired: tally.waits.acquired + waitsAfter.acquired - waitsBefore.acquired,
          waitedMs: tally.waits.waitedMs + waitsAfter.waitedMs - waitsBefore.waitedMs,
        }
      : null;
  tally.ttfe.push(...result.ttfe);
  tally.ttle.push(...result.ttle);
  for (const reason of result.failures) tally.failureReasons[reason] = (tally.failureReasons[reason] ?? 0) + 1;
  tally.retryAfter += result.retryAfter;
  tally.runs += concurrency;
  tally.wallMs += result.wallMs;
  tally.rss.push(subject.pids.reduce((sum, pid) => sum + rssMbOf(pid), 0));
  return [...result.ttfe].sort((a, b) => a - b);
}

function rowOf(t: Tally, concurrency: number): StreamsRow {
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const [ttfe, ttle] = [sorted(t.ttfe), sorted(t.ttle)];
  const failures = Object.values(t.failureReasons).reduce((sum, n) => sum + n, 0);
  const completed = t.runs - failures;
  return {
    subject: t.subject.name,
    concurrency,
    runs: t.runs,
    failures,
    failureReasons: t.failureReasons,
    retryAfter: t.retryAfter,
    runsPerSecond: (completed / t.wallMs) * 1000,
    stepsPerSecond: (t.calls / t.wallMs) * 1000,
    ttfeP50: percentile(ttfe, 0.5),
    ttfeP99: percentile(ttfe, 0.99),
    ttleP50: percentile(ttle, 0.5),
    ttleP99: percentile(ttle, 0.99),
    cpuMsPerRun: t.cpuMs / completed,
    backendsMsPerRun: t.backendsMs / completed,
    poolWaitMs: t.waits && t.waits.acquired > 0 ? t.waits.waitedMs / t.waits.acquired : Number.NaN,
    rssMb: t.rss,
    load1: os.loadavg()[0] ?? Number.NaN,
  };
}

async function createConversations(url: string, count: number): Promise<string[]> {
  const client = loopdClient(url);
  const conversations: string[] = [];
  for (let i = 0; i < count; i++) conversations.push(await client.createConversation());
  return conversations;
}

/** `count` streaming runs started together on fresh conversations (created beforehand, untimed). */
async function streamRound(url: string, count: number): Promise<void> {
  await streamRun(url, await createConversations(url, count));
}

interface RoundResult {
  ttfe: number[];
  ttle: number[];
  failures: string[];
  retryAfter: number;
  wallMs: number;
}

async function streamRun(url: string, conversations: string[]): Promise<RoundResult> {
  const started = performance.now();
  const outcomes = await Promise.all(conversations.map((conversationId) => streamOne({ url, conversationId })));
  const wallMs = performance.now() - started;
  return {
    ttfe: outcomes.flatMap((o) => (o.ttfe === null ? [] : [o.ttfe])),
    ttle: outcomes.flatMap((o) => (o.failure === null && o.ttle !== null ? [o.ttle] : [])),
    failures: outcomes.flatMap((o) => (o.failure === null ? [] : [o.failure])),
    retryAfter: outcomes.filter((o) => o.retryAfter).length,
    wallMs,
  };
}

/**
 * One streaming run, read to its end: when its first and last events came,
 * and why it failed if it did not complete (its status, its last event, or
 * the connection's error code); `headers` carry a key where keys are on.
 */
export async function streamOne({
  url,
  conversationId,
  headers = {},
}: {
  url: string;
  conversationId: string;
  headers?: Record<string, string>;
}): Promise<{ ttfe: number | null; ttle: number | null; failure: string | null; retryAfter: boolean }> {
  const started = performance.now();
  let ttfe: number | null = null;
  let ttle: number | null = null;
  try {
    const res = await fetch(`${url}/conversations/${conversationId}/messages`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ content: SCENARIOS.tool.prompt, stream: true }),
    });
    if (res.status !== 200) {
      // The status and the error's code: a 429 says which cap (too_many_runs, too_many_streams).
      const code = ((await res.json().catch(() => null)) as { error?: { code?: string } } | null)?.error?.code;
      return {
        ttfe,
        ttle,
        failure: code ? `${res.status} ${code}` : String(res.status),
        retryAfter: res.headers.has("retry-after"),
      };
    }
    let last = "none";
    for await (const item of readSse(res)) {
      if (!isEvent(item)) continue;
      ttle = performance.now() - started;
      ttfe ??= ttle;
      last = item.event;
    }
    return { ttfe, ttle, failure: last === "run.completed" ? null : last, retryAfter: false };
  } catch (error) {
    return { ttfe, ttle, failure: errorCode(error), retryAfter: false };
  }
}

function errorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === "string" ? cause.code : String(error);
}
