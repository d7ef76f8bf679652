/**
 * `npm run bench`: whole-process figures for loopd, each against a baseline
 * measured in the same run. Never part of the tests. One folder per
 * scenario, named for its BENCH_ONLY key (bench/README.md lists them); the
 * plumbing they share is in bench/lib/. This file runs the chosen ones and
 * prints their tables.
 *
 * On PGlite always; also on Postgres when BENCH_DATABASE_URL is set (a fresh
 * database is created on that server and dropped afterwards; BENCH_DATABASES=postgres
 * leaves PGlite out). BENCH_ONLY picks scenarios by key (comma-separated);
 * BENCH_BASELINE_DIR names an older checkout measured alongside in floor,
 * streams, checks and guard.
 *
 *   BENCH_RUNS=200 BENCH_CONCURRENCY=8 BENCH_DATABASE_URL=postgres://… npm run bench
 *   BENCH_ONLY=floor,streams BENCH_BASELINE_DIR=/tmp/loopd-before npm run bench
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { startFakeLlm } from "../test/support/fake-llm/server.js";
import { measureAppendCost, type AppendRow } from "./growth/append-cost.js";
import { createBenchDatabase, type BenchDatabase } from "./lib/bench-database.js";
import { measureHistoryGrowth, type GrowthRow } from "./growth/history-growth.js";
import { measureConcurrentStreams, type StreamsRow } from "./streams/concurrent-streams.js";
import { measureIdleFollowers, type IdleFollowersRow } from "./idle/idle-followers.js";
import { measureQueuedStart, type QueuedStartRow } from "./queue/queued-start.js";
import { measurePauseAnswer, type PauseAnswerRow } from "./pause/pause-answer.js";
import { measureAuthOverhead } from "./auth/auth-overhead.js";
import { measureRequestChecks } from "./checks/request-checks.js";
import { measureAgentResolution } from "./agent/agent-resolution.js";
import { measureAgentCallers } from "./mcp-a2a/agent-callers.js";
import { measureSandboxStepCost } from "./sandbox/sandbox-step-cost.js";
import { measureGuardFalsePositives } from "./guard/overload-false-positives.js";
import { measureChaos } from "./chaos/chaos-runs.js";
import { measureTenantFlood } from "./flood/tenant-flood.js";
import { measureToolSourceOverhead, PARALLEL_CALL_MS, PARALLEL_CALLS } from "./httptool/tool-source-overhead.js";
import { measureImageStepCost } from "./images/image-step-cost.js";
import { measureAgentCallCost } from "./agentcall/agent-call-cost.js";
import { measureFirstStart, type FirstStartRow } from "./first-start/first-start.js";
import { measureBudgetOverhead, type BudgetOverheadRow } from "./budget/budget-overhead.js";
import { measureContextCost, type ContextCostRow } from "./context/context-cost.js";
import {
  LONG_CONVERSATION_LIMIT,
  measureLongConversationCost,
  type LongConversationRow,
} from "./context/long-conversation-cost.js";
import { measureTraceOverhead, traceOverheadTable } from "./trace/trace-overhead.js";
import { pgliteLongRunTable, postgresLongRunTable } from "./floor/long-run-tables.js";
import { measureLongRuns, type LongRunRow } from "./floor/long-runs.js";
import { loopdClient } from "./lib/loopd-client.js";
import { markdownTable } from "./lib/markdown-table.js";
import { ms, percentile } from "./lib/measure.js";
import { measureRunOverhead, type OverheadRow } from "./overhead/run-overhead.js";
import { SCENARIOS } from "./lib/run-shapes.js";
import { startLoopdProcess, openAiOnFakeLlm } from "./lib/start-loopd-process.js";
import { streamsTable } from "./streams/streams-table.js";
import { measureResponsesStreams, type ResponsesRow } from "./responses/responses-streams.js";
import { responsesTable } from "./responses/responses-table.js";
import { measureWebhookLatency } from "./webhooks/webhook-latency.js";
import type { Via } from "./scale/instance-fleet.js";
import { measureScale } from "./scale/scale-section.js";

const runs = positiveInt(process.env.BENCH_RUNS, 200);
const concurrency = positiveInt(process.env.BENCH_CONCURRENCY, 8);
const logLevel = process.env.BENCH_LOG_LEVEL ?? "warn";
const GROWTH_CHECKPOINTS = [10, 100, 1000];
const followers = positiveInt(process.env.BENCH_FOLLOWERS, 500);
const APPEND_CHECKPOINTS = [10, 100, 1000, 10_000];
const pauseSamples = positiveInt(process.env.BENCH_PAUSES, 100);
const budgetRuns = positiveInt(process.env.BENCH_BUDGET_RUNS, 30);
const webhookRuns = positiveInt(process.env.BENCH_WEBHOOKS, 100);
const sandboxRuns = positiveInt(process.env.BENCH_SANDBOX_RUNS, 20);
const sandboxSteps = positiveInt(process.env.BENCH_SANDBOX_STEPS, 10);
const guardLoads = (process.env.BENCH_GUARD_LOADS ?? "2,4").split(",").map((n) => positiveInt(n, 2));
const guardSeconds = positiveInt(process.env.BENCH_GUARD_SECONDS, 25);
const guardRate = positiveInt(process.env.BENCH_GUARD_RATE, 5);
const floods = (process.env.BENCH_FLOOD ?? "200,500").split(",").map((n) => positiveInt(n, 200));
const floodQuiet = positiveInt(process.env.BENCH_FLOOD_QUIET, 20);
const floodCap = positiveInt(process.env.BENCH_FLOOD_CAP, 100);
const floodRounds = positiveInt(process.env.BENCH_FLOOD_ROUNDS, 3);
const chaosRuns = positiveInt(process.env.BENCH_CHAOS_RUNS, 200);
const chaosFaultPercent = positiveInt(process.env.BENCH_CHAOS_FAULT_PERCENT, 20);
const chaosOutageMs = positiveInt(process.env.BENCH_CHAOS_OUTAGE_MS, 10_000);
const agentCalls = positiveInt(process.env.BENCH_AGENT_CALLS, 100);
/** A loop whose timer fires less than this late is healthy: half of MAX_EVENT_LOOP_DELAY_MS's default, the new guard's own "healthy". */
const GUARD_HEALTHY_MS = 500;
const LONG_RUN_STEPS = (process.env.BENCH_STEPS ?? "10,100,1000").split(",").map((n) => positiveInt(n, 10));
const TRACE_STEPS = (process.env.BENCH_TRACE_STEPS ?? "10,100,1000").split(",").map((n) => positiveInt(n, 10));
const streams = (process.env.BENCH_STREAMS ?? "50,200,500").split(",").map((n) => positiveInt(n, 200));
const streamRounds = positiveInt(process.env.BENCH_STREAM_ROUNDS, 3);
const responsesConcurrency = positiveInt(process.env.BENCH_RESPONSES_STREAMS, 200);
const responsesRounds = positiveInt(process.env.BENCH_RESPONSES_ROUNDS, 3);
const responsesSubjects = (process.env.BENCH_RESPONSES_SUBJECTS ?? "messages,responses,openai sdk")
  .split(",")
  .map((s) => s.trim());
const responsesShapes = (process.env.BENCH_RESPONSES_SHAPES ?? "tool,text").split(",").map((s) => s.trim());
const baselineDir = process.env.BENCH_BASELINE_DIR || undefined;
const scaleOptions = {
  counts: (process.env.BENCH_SCALE_INSTANCES ?? "1,2,3").split(",").map((n) => positiveInt(n, 1)),
  // direct, pgbouncer (with DATABASE_DIRECT_URL), polling (pgbouncer without it).
  vias: (process.env.BENCH_SCALE_VIAS ?? "direct,pgbouncer,polling")
    .split(",")
    .map((v) => v.trim())
    .map((v) => (v === "polling" ? "pgbouncer, polling" : v)) as Via[],
  rounds: positiveInt(process.env.BENCH_SCALE_ROUNDS, 2),
  concurrency: positiveInt(process.env.BENCH_SCALE_CONCURRENCY, 200),
  steps: positiveInt(process.env.BENCH_SCALE_STEPS, 10),
  warmup: positiveInt(process.env.BENCH_SCALE_WARMUP, 20),
  killSeconds: process.env.BENCH_SCALE_KILL_SECONDS === "0" ? 0 : positiveInt(process.env.BENCH_SCALE_KILL_SECONDS, 60),
  killConcurrency: positiveInt(process.env.BENCH_SCALE_KILL_CONCURRENCY, 60),
  killLeaseMs: positiveInt(process.env.BENCH_SCALE_KILL_LEASE_MS, 5_000),
  bouncerPoolPerInstance: 10,
};
const firstStartRounds = positiveInt(process.env.BENCH_FIRST_START_ROUNDS, 1);
const firstStartRestarts = positiveInt(process.env.BENCH_FIRST_START_RESTARTS, 3);
const quiet = {
  othersShare: positiveInt(process.env.BENCH_QUIET_PERCENT, 10) / 100,
  tries: positiveInt(process.env.BENCH_ROW_TRIES, 3),
};

const SECTIONS = [
  "overhead",
  "growth",
  "pause",
  "budget",
  "idle",
  "floor",
  "streams",
  "context",
  "trace",
  "httptool",
  "auth",
  "queue",
  "webhooks",
  "images",
  "checks",
  "sandbox",
  "guard",
  "flood",
  "first-start",
  "chaos",
  "agentcall",
  "agent",
  "mcp-a2a",
  "scale",
  "responses",
] as const;
type Section = (typeof SECTIONS)[number];
const only = selectedSections(process.env.BENCH_ONLY);

const GUARD_COLUMNS = [
  "db",
  "busy processes",
  "subject",
  "requests",
  "refused health",
  "refused reads",
  "refused new runs",
  "refused in all",
  "of them with the loop healthy",
  `of them answered < ${GUARD_HEALTHY_MS} ms`,
  "false-positive rate",
  "answered p50 · p99 ms",
  "other answers",
];

const CHAOS_COLUMNS = [
  "db",
  "phase",
  "completed",
  "not completed",
  "faults / model calls",
  "model.retry · model.fallback events",
  "tools run twice",
  "steps whose streamed text ≠ saved",
  "run p50 · p99 ms",
  "added p50 · p99 ms (vs clean)",
];

const FLOOD_COLUMNS = [
  "db",
  "A starts at once",
  "A completed",
  "A refused",
  "A runs/s",
  "B runs/s with · without",
  "B first event p50 with · without",
  "B first event p99 with · without",
  "B p99 with ÷ without",
  "B failed with · without",
];

const CALLER_COLUMNS = [
  "db",
  "path",
  "calls",
  "p50 ms",
  "p99 ms",
  "added p50 · p99 (vs messages)",
  "added, paired p50",
  "loopd CPU ms/call",
  "added CPU (vs messages)",
  "Postgres CPU ms/call",
  "added (vs messages)",
  "client CPU ms/call",
];

const signed = (n: number) => `${n >= 0 ? "+" : "−"}${ms(Math.abs(n))}`;

function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

function selectedSections(value: string | undefined): Set<Section> {
  if (!value) return new Set(SECTIONS);
  const names = value.split(",").map((s) => s.trim());
  const unknown = names.filter((n) => !(SECTIONS as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw new Error(`BENCH_ONLY: unknown section(s) ${unknown.join(", ")}; pick from ${SECTIONS.join(", ")}`);
  return new Set(names as Section[]);
}

async function benchOn(database: BenchDatabase) {
  const llm = await startFakeLlm();
  const sdk = new OpenAI({ apiKey: "bench", baseURL: `${llm.url}/v1`, maxRetries: 0 });
  const workspace = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-ws-"));
  const loopd = await startLoopdProcess({
    env: {
      ...database.env,
      ...openAiOnFakeLlm(llm.url),
      LOG_LEVEL: logLevel,
      WORKSPACE_DIR: workspace,
    },
  });
  try {
    const client = loopdClient(loopd.url);
    const overhead: OverheadRow[] = [];
    for (const scenario of only.has("overhead") ? (["text", "tool"] as const) : []) {
      progress(`${database.kind}: ${SCENARIOS[scenario].label}`);
      overhead.push(
        ...(await measureRunOverhead({ llm, loopd: client, sdk, scenario, runs, concurrencies: [1, concurrency] })),
      );
    }
    let growth: GrowthRow[] = [];
    if (only.has("growth")) {
      progress(`${database.kind}: growing one conversation to ${GROWTH_CHECKPOINTS.at(-1)} messages`);
      growth = await measureHistoryGrowth({ llm, loopd: client, sdk, checkpoints: GROWTH_CHECKPOINTS, samples: 20 });
    }
    let pause: PauseAnswerRow | null = null;
    if (only.has("pause")) {
      progress(`${database.kind}: pauses answered against plain tool round trips`);
      pause = await measurePauseAnswer({ llm, loopdUrl: loopd.url, samples: pauseSamples });
    }
    let queue: QueuedStartRow | null = null;
    if (only.has("queue")) {
      progress(`${database.kind}: enqueued runs started by loopd against messages the client chains`);
      queue = await measureQueuedStart({ llm, loopdUrl: loopd.url, samples: pauseSamples });
    }
    let budget: BudgetOverheadRow | null = null;
    if (only.has("budget")) {
      progress(`${database.kind}: budget checks against the same loop without them`);
      budget = await measureBudgetOverhead({ llm, loopdUrl: loopd.url, runs: budgetRuns, steps: 20 });
    }
    let idle: IdleFollowersRow | null = null;
    if (only.has("idle")) {
      progress(`${database.kind}: ${followers} idle followers of one run`);
      idle = await measureIdleFollowers({
        llm,
        loopdUrl: loopd.url,
        loopdPid: loopd.pid,
        databaseUrl: database.open.databaseUrl,
        followers,
      });
    }
    await loopd.stop();
    let appends: AppendRow[] = [];
    if (only.has("growth")) {
      progress(`${database.kind}: store appends up to ${APPEND_CHECKPOINTS.at(-1)} messages`);
      appends = await measureAppendCost({ open: database.open, checkpoints: APPEND_CHECKPOINTS, samples: 50 });
    }
    return { overhead, growth, appends, idle, pause, budget, queue };
  } finally {
    await loopd.stop();
    await llm.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

function idleRow(kind: string, row: IdleFollowersRow): string[] {
  const { followers: n, statementsPerSecond, rssBeforeMiB, rssWithFollowersMiB } = row;
  return [
    kind,
    String(n),
    statementsPerSecond === null ? "—" : statementsPerSecond.toFixed(1),
    rssBeforeMiB.toFixed(0),
    rssWithFollowersMiB.toFixed(0),
  ];
}

function progress(line: string) {
  process.stderr.write(`… ${line}\n`);
}

const WHOLE_PROCESS_SECTIONS: readonly Section[] = ["overhead", "growth", "pause", "budget", "idle", "queue"];

async function main() {
  const cpus = os.cpus();
  // BENCH_DATABASES=postgres leaves PGlite out (to measure one change on Postgres quickly).
  const kinds = (process.env.BENCH_DATABASES ?? "pglite,postgres").split(",").map((k) => k.trim());
  const backends: Array<string | undefined> = kinds.includes("pglite") ? [undefined] : [];
  if (process.env.BENCH_DATABASE_URL && kinds.includes("postgres")) backends.push(process.env.BENCH_DATABASE_URL);

  const overheadRows: string[][] = [];
  const growthRows: string[][] = [];
  const appendRows: string[][] = [];
  const idleRows: string[][] = [];
  const pauseRows: string[][] = [];
  const queueRows: string[][] = [];
  const budgetRows: string[][] = [];
  const longRuns: Record<"pglite" | "postgres", LongRunRow[]> = { pglite: [], postgres: [] };
  const streamRows: Array<StreamsRow & { kind: string }> = [];
  const traceTables: string[] = [];
  const httpToolRows: string[][] = [];
  const imageRows: string[][] = [];
  const checksRows: string[][] = [];
  const agentRows: string[][] = [];
  const parallelRows: string[][] = [];
  const authRows: string[][] = [];
  const webhookRows: string[][] = [];
  const sandboxRows: string[][] = [];
  const guardRows: string[][] = [];
  const floodRows: string[][] = [];
  const chaosRows: string[][] = [];
  const agentCallRows: string[][] = [];
  const callerRows: string[][] = [];
  const callerLoad: string[] = [];
  const scaleLines: string[] = [];
  const responsesRows: Array<ResponsesRow & { kind: string }> = [];
  const responsesLoad: string[] = [];
  for (const serverUrl of backends) {
    const kind = serverUrl ? "postgres" : "pglite";
    if (WHOLE_PROCESS_SECTIONS.some((section) => only.has(section))) {
      const database = await createBenchDatabase(serverUrl);
      try {
        const { overhead, growth, appends, idle, pause, budget, queue } = await benchOn(database);
        if (queue) {
          const { queued: q, chained: c } = queue;
          queueRows.push([
            database.kind,
            ms(c.p50),
            ms(c.p95),
            ms(q.p50),
            ms(q.p95),
            ms(q.p50 - c.p50),
            `${(q.p50 / c.p50).toFixed(2)}×`,
          ]);
        }
        if (budget) {
          const { steps, plain: p, budgeted: b } = budget;
          budgetRows.push([
            database.kind,
            String(steps),
            ms(p.p50),
            ms(b.p50),
            ms(p.mean),
            ms(b.mean),
            `${(b.mean / p.mean).toFixed(3)}×`,
          ]);
        }
        if (idle) idleRows.push(idleRow(database.kind, idle));
        if (pause) {
          const { toolRoundTrip: t, answerToRequest: a } = pause;
          pauseRows.push([
            database.kind,
            ms(t.p50),
            ms(t.p95),
            ms(a.p50),
            ms(a.p95),
            ms(a.p50 - t.p50),
            `${(a.p50 / t.p50).toFixed(2)}×`,
          ]);
        }
        for (const { scenario, concurrency: c, direct, loopd } of overhead) {
          overheadRows.push([
            database.kind,
            SCENARIOS[scenario].label,
            c === 1 ? "sequential" : `${c} in flight`,
            ms(direct.mean),
            ms(loopd.mean),
            ms(loopd.p50),
            ms(loopd.p95),
            ms(loopd.mean - direct.mean),
            `${(loopd.mean / direct.mean).toFixed(1)}×`,
            direct.perSecond.toFixed(0),
            loopd.perSecond.toFixed(0),
          ]);
        }
        for (const { messages, direct, loopd } of growth) {
          growthRows.push([database.kind, String(messages), ms(direct.p50), ms(loopd.p50), ms(loopd.p50 - direct.p50)]);
        }
        for (const { messages, append, read } of appends) {
          appendRows.push([database.kind, String(messages), ms(append.p50), ms(append.p95), ms(read.p50)]);
        }
      } finally {
        await database.drop();
      }
    }
    if (only.has("httptool")) {
      progress(`${kind}: HTTP and MCP tools against the built-in calculate`);
      const database = await createBenchDatabase(serverUrl);
      try {
        const { rows, parallel, sequential } = await measureToolSourceOverhead({
          databaseEnv: database.env,
          runs: budgetRuns,
          steps: 20,
          logLevel,
        });
        const builtin = rows[0]!.step.p50;
        for (const { source, step, direct } of rows) {
          httpToolRows.push([
            kind,
            source,
            ms(step.p50),
            source === "builtin" ? "" : ms(step.p50 - builtin),
            direct ? ms(direct.p50) : "",
            direct ? ms(step.p50 - builtin - direct.p50) : "",
          ]);
        }
        parallelRows.push([
          kind,
          ms(parallel.p50),
          ms(sequential.p50),
          `${(sequential.p50 / parallel.p50).toFixed(1)}×`,
        ]);
      } finally {
        await database.drop();
      }
    }
    if (only.has("auth")) {
      progress(`${kind}: API keys on against off`);
      const { steps, stepOff, stepOn, readOff, readOn } = await measureAuthOverhead({
        serverUrl,
        runs: budgetRuns,
        steps: 20,
        logLevel,
      });
      const pct = (on: number, off: number) => `${(((on - off) / off) * 100).toFixed(1)}%`;
      authRows.push([
        kind,
        String(steps),
        ms(stepOff.p50),
        ms(stepOn.p50),
        pct(stepOn.p50, stepOff.p50),
        ms(readOff.p50),
        ms(readOn.p50),
        pct(readOn.p50, readOff.p50),
      ]);
    }
    if (only.has("agent")) {
      progress(`${kind}: the same runs on a conversation from an agent and on one without`);
      const rounds = positiveInt(process.env.BENCH_AGENT_ROUNDS, 300);
      const vs = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(1)}%`;
      for (const row of await measureAgentResolution({ serverUrl, rounds, logLevel })) {
        agentRows.push([
          kind,
          row.shape,
          ms(row.plain.p50),
          ms(row.agent.p50),
          vs(row.agent.p50, row.plain.p50),
          ms(row.plain.mean),
          ms(row.agent.mean),
          vs(row.agent.mean, row.plain.mean),
          row.plainCpu.toFixed(2),
          row.agentCpu.toFixed(2),
          vs(row.agentCpu, row.plainCpu),
        ]);
      }
    }
    if (only.has("checks") && !baselineDir)
      progress("checks left out: it measures this checkout against BENCH_BASELINE_DIR, which is not set");
    if (only.has("checks") && baselineDir) {
      progress(`${kind}: plain requests against the checkout in BENCH_BASELINE_DIR`);
      const rows = await measureRequestChecks({
        serverUrl,
        baselineDir,
        rounds: positiveInt(process.env.BENCH_CHECK_ROUNDS, 300),
        logLevel,
      });
      const [now, before] = rows;
      for (const row of rows) {
        const vs = (a: number, b: number) => (row === now ? `${(((a - b) / b) * 100).toFixed(1)}%` : "");
        checksRows.push([
          kind,
          row.subject,
          ms(row.read.p50),
          vs(row.read.p50, before!.read.p50),
          ms(row.message.p50),
          vs(row.message.p50, before!.message.p50),
          row.cpuPerRequest.toFixed(3),
          vs(row.cpuPerRequest, before!.cpuPerRequest),
        ]);
      }
    }
    // Many instances on one server, and pgbouncer in front of it: Postgres only.
    if (only.has("scale") && serverUrl) {
      scaleLines.push(
        ...(await measureScale({
          serverUrl,
          logLevel,
          options: scaleOptions,
          progress,
        })),
      );
      progress(`postgres: scale\n${scaleLines.join("\n")}`);
    }
    if (only.has("mcp-a2a")) {
      progress(`${kind}: one agent called over /mcp, A2A and POST …/messages`);
      const { rows, machineBusy, loopdBusy } = await measureAgentCallers({
        serverUrl,
        rounds: positiveInt(process.env.BENCH_CALLER_ROUNDS, 300),
        logLevel,
      });
      callerLoad.push(
        `${kind}: the machine ${(machineBusy * 100).toFixed(0)}% busy over the rounds, loopd ${(loopdBusy * 100).toFixed(0)}% of it`,
      );
      const base = rows.find((r) => r.path === "messages")!;
      const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
      const p50 = (xs: number[]) => percentile(sorted(xs), 0.5);
      const p99 = (xs: number[]) => percentile(sorted(xs), 0.99);
      for (const row of rows) {
        const isBase = row === base;
        // Paired: each call against the messages call of its own round, so a busy moment falls on both.
        const paired = row.latencies.map((t, i) => t - base.latencies[i]!);
        callerRows.push([
          kind,
          row.path,
          String(row.latencies.length),
          ms(p50(row.latencies)),
          ms(p99(row.latencies)),
          isBase
            ? "–"
            : `${signed(p50(row.latencies) - p50(base.latencies))} · ${signed(p99(row.latencies) - p99(base.latencies))}`,
          isBase ? "–" : signed(p50(paired)),
          row.cpuPerCall.toFixed(2),
          isBase
            ? "–"
            : `${signed(row.cpuPerCall - base.cpuPerCall)} (${(row.cpuPerCall / base.cpuPerCall).toFixed(2)}×)`,
          row.databaseCpuPerCall === null ? "–" : row.databaseCpuPerCall.toFixed(2),
          row.databaseCpuPerCall === null || base.databaseCpuPerCall === null || isBase
            ? "–"
            : signed(row.databaseCpuPerCall - base.databaseCpuPerCall),
          row.clientCpuPerCall.toFixed(2),
        ]);
      }
    }
    if (only.has("responses")) {
      progress(`${kind}: ${responsesConcurrency} streaming runs at once through /v1/responses and POST …/messages`);
      const { rows, loadBefore, loadAfter } = await measureResponsesStreams({
        serverUrl,
        concurrency: responsesConcurrency,
        rounds: responsesRounds,
        shapes: responsesShapes,
        subjects: responsesSubjects,
        logLevel,
        progress,
      });
      responsesRows.push(...rows.map((row) => ({ kind, ...row })));
      responsesLoad.push(
        `${kind}: load average ${loadBefore.toFixed(1)} before the first round, ${loadAfter.toFixed(1)} after the last`,
      );
      progress(
        `${kind}: /v1/responses against POST …/messages\n${responsesTable(responsesRows.filter((r) => r.kind === kind))}`,
      );
    }
    if (only.has("sandbox")) {
      progress(`${kind}: run_command and an MCP stdio call under bwrap against unconfined`);
      const rows = await measureSandboxStepCost({ serverUrl, runs: sandboxRuns, steps: sandboxSteps, logLevel });
      for (const tool of ["run_command", "mcp stdio"] as const) {
        const none = rows.find((r) => r.tool === tool && r.sandbox === "none")!;
        const bwrap = rows.find((r) => r.tool === tool && r.sandbox === "bwrap")!;
        sandboxRows.push([
          kind,
          tool,
          ms(none.step.p50),
          ms(bwrap.step.p50),
          ms(bwrap.step.p50 - none.step.p50),
          ms(none.call.p50),
          ms(bwrap.call.p50),
          ms(bwrap.call.p50 - none.call.p50),
        ]);
      }
    }
    if (only.has("guard") && !baselineDir)
      progress("guard left out: it measures this checkout against BENCH_BASELINE_DIR, which is not set");
    if (only.has("guard") && baselineDir) {
      const busyCounts = guardLoads.map((m) => m * os.cpus().length);
      const rows = await measureGuardFalsePositives({
        serverUrl,
        baselineDir,
        busyCounts,
        seconds: guardSeconds,
        perSecond: guardRate,
        healthyMs: GUARD_HEALTHY_MS,
        logLevel,
        progress,
      });
      for (const r of rows) {
        const refusals = r.refused.health + r.refused.read + r.refused.run;
        const others =
          Object.entries(r.other)
            .map(([k, n]) => `${k}: ${n}`)
            .join(", ") || "–";
        guardRows.push([
          kind,
          String(r.busy),
          r.subject,
          String(r.requests),
          String(r.refused.health),
          String(r.refused.read),
          String(r.refused.run),
          String(refusals),
          String(r.falsePositives),
          String(r.answeredQuickly),
          `${((100 * r.falsePositives) / Math.max(1, r.requests)).toFixed(1)}%`,
          `${ms(r.latencyP50)} · ${ms(r.latencyP99)}`,
          others,
        ]);
      }
      progress(`${kind}: the overload guard on a busy machine\n${markdownTable(GUARD_COLUMNS, guardRows)}`);
    }
    if (only.has("flood")) {
      const rows = await measureTenantFlood({
        serverUrl,
        floods,
        quiet: floodQuiet,
        cap: floodCap,
        rounds: floodRounds,
        logLevel,
        progress: (line) => progress(`${kind}: ${line}`),
      });
      const counted = (counts: Record<string, number>) =>
        Object.entries(counts)
          .map(([why, n]) => `${why} ×${n}`)
          .join(", ") || "0";
      for (const { flood, floodCompleted, floodRefused, floodRunsPerSecond, withFlood: w, alone } of rows) {
        const failed = (t: typeof w) => Object.values(t.failures).reduce((sum, n) => sum + n, 0);
        floodRows.push([
          kind,
          String(flood),
          String(floodCompleted),
          counted(floodRefused),
          floodRunsPerSecond.toFixed(1),
          `${w.runsPerSecond.toFixed(1)} · ${alone.runsPerSecond.toFixed(1)}`,
          `${ms(w.ttfeP50)} · ${ms(alone.ttfeP50)}`,
          `${ms(w.ttfeP99)} · ${ms(alone.ttfeP99)}`,
          `${(w.ttfeP99 / alone.ttfeP99).toFixed(2)}×`,
          `${failed(w)} · ${failed(alone)}`,
        ]);
      }
      progress(`${kind}: a flooding tenant and a quiet one\n${markdownTable(FLOOD_COLUMNS, floodRows)}`);
    }
    if (only.has("chaos")) {
      const rows = await measureChaos({
        serverUrl,
        runs: chaosRuns,
        faultShare: chaosFaultPercent / 100,
        outageMs: chaosOutageMs,
        logLevel,
        progress: (line) => progress(`${kind}: ${line}`),
      });
      const clean = rows.find((r) => r.phase === "clean");
      for (const r of rows) {
        const failed =
          Object.entries(r.failures)
            .map(([why, n]) => `${why} ×${n}`)
            .join(", ") || "0";
        chaosRows.push([
          kind,
          r.phase,
          `${r.completed}/${r.runs}`,
          failed,
          `${r.faults}/${r.calls}`,
          `${r.retries} · ${r.fallbacks}`,
          `${r.duplicateExecutions} of ${r.executions}`,
          String(r.textMismatches),
          `${ms(r.p50)} · ${ms(r.p99)}`,
          clean && r !== clean ? `${signed(r.p50 - clean.p50)} · ${signed(r.p99 - clean.p99)}` : "–",
        ]);
      }
      progress(`${kind}: chaos\n${markdownTable(CHAOS_COLUMNS, chaosRows)}`);
    }
    if (only.has("agentcall")) {
      progress(`${kind}: a child agent's call against a tool call of the same work, ${agentCalls} of each`);
      const database = await createBenchDatabase(serverUrl);
      try {
        const [tool, agent] = await measureAgentCallCost({ open: database.open, samples: agentCalls, logLevel });
        for (const row of [tool!, agent!])
          agentCallRows.push([
            kind,
            row.subject,
            ms(row.call.p50),
            ms(row.call.p99),
            row.statementsPerRun.toFixed(1),
            ms(row.cpuMsPerRun),
            row === agent
              ? `+${ms(agent.call.p50 - tool!.call.p50)} ms · +${(agent.statementsPerRun - tool!.statementsPerRun).toFixed(1)} · +${ms(agent.cpuMsPerRun - tool!.cpuMsPerRun)} ms`
              : "",
          ]);
      } finally {
        await database.drop();
      }
    }
    if (only.has("images")) {
      progress(`${kind}: a conversation holding 10 images against one holding none`);
      const database = await createBenchDatabase(serverUrl);
      try {
        const [none, ten] = await measureImageStepCost({
          databaseEnv: database.env,
          runs: budgetRuns,
          steps: 20,
          logLevel,
        });
        for (const row of [none!, ten!]) {
          imageRows.push([
            kind,
            String(row.images),
            ms(row.step.p50),
            ms(row.cpuPerStep),
            `${(row.lastRequestBytes / 1024).toFixed(0)} KB`,
            row === ten
              ? `${(ten.step.p50 / none!.step.p50).toFixed(2)}× · ${(ten.cpuPerStep / none!.cpuPerStep).toFixed(2)}×`
              : "",
          ]);
        }
      } finally {
        await database.drop();
      }
    }
    if (only.has("webhooks")) {
      progress(`${kind}: webhook latency, ${webhookRuns} runs`);
      const { p50, p99, max } = await measureWebhookLatency({ serverUrl, runs: webhookRuns, logLevel });
      webhookRows.push([kind, String(webhookRuns), ms(p50), ms(p99), ms(max)]);
    }
    if (only.has("floor")) {
      longRuns[kind] = await measureLongRuns({
        serverUrl,
        stepCounts: LONG_RUN_STEPS,
        baselineDir,
        logLevel,
        quiet,
        progress,
      });
      // Shown as soon as measured: a later section that fails must not take these figures with it.
      progress(
        `${kind}: long runs against the floor\n${(kind === "postgres" ? postgresLongRunTable : pgliteLongRunTable)(longRuns[kind])}`,
      );
    }
    if (only.has("trace")) {
      const rows = await measureTraceOverhead({ serverUrl, stepCounts: TRACE_STEPS, logLevel, quiet, progress });
      traceTables.push(traceOverheadTable(kind, rows));
      progress(`${kind}: the trace against TRACE=off\n${traceTables.at(-1)}`);
    }
    if (only.has("streams")) {
      const rows = await measureConcurrentStreams({
        serverUrl,
        baselineDir,
        logLevel,
        concurrencies: streams,
        rounds: streamRounds,
        progress,
      });
      streamRows.push(...rows.map((row) => ({ kind, ...row })));
      progress(`${kind}: streaming runs at once\n${streamsTable(rows.map((row) => ({ kind, ...row })))}`);
    }
  }

  let contextRows: ContextCostRow[] = [];
  let longConversationRows: LongConversationRow[] = [];
  if (only.has("context")) {
    progress("context strategies: a 30-step tool-heavy conversation");
    contextRows = await measureContextCost({ logLevel });
    progress("context strategies: a 60-turn conversation");
    longConversationRows = await measureLongConversationCost({ logLevel });
  }
  let firstStartRows: FirstStartRow[] = [];
  if (only.has("first-start")) {
    firstStartRows = await measureFirstStart({
      rounds: firstStartRounds,
      restarts: firstStartRestarts,
      progress,
    });
  }
  const naive = contextRows[0];
  const pct = (n: number, of: number | undefined) => (of ? `${((100 * n) / of).toFixed(1)}%` : "—");
  const kTokens = (n: number) => `${(n / 1000).toFixed(1)}k`;

  const section = (name: Section, lines: string[]) => (only.has(name) ? [...lines, ""] : []);
  const out = [
    `# loopd bench — ${new Date().toISOString()}`,
    "",
    `Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}.`,
    `loopd runs as its own process (LOG_LEVEL=${logLevel}); the fake LLM and the clients share this one. ${runs} runs per row.`,
    ...(baselineDir ? [`"loopd before" is the checkout in ${baselineDir}, started the same way.`] : []),
    "",
    ...section("overhead", [
      "## overhead: Overhead of a loopd run over the same model calls made directly",
      "",
      "Times in ms per run (mean unless marked); throughput in runs per second.",
      "",
      markdownTable(
        [
          "db",
          "scenario",
          "mode",
          "SDK direct",
          "loopd",
          "loopd p50",
          "loopd p95",
          "overhead",
          "ratio",
          "direct/s",
          "loopd/s",
        ],
        overheadRows,
      ),
    ]),
    ...section("growth", [
      "## growth: One conversation growing: a whole run at N messages (p50 of 20 runs, ms)",
      "",
      "The direct call sends the same whole history loopd sent; the overhead includes reading the history (once per run) and the appends.",
      "",
      markdownTable(["db", "messages", "SDK direct", "loopd run", "overhead"], growthRows),
      "",
      "## growth: Persistence alone: one append per transaction at N messages (50 appends, ms)",
      "",
      markdownTable(["db", "messages", "append p50", "append p95", "read whole history p50"], appendRows),
    ]),
    ...section("pause", [
      `## pause: A pause answered, against the same step run straight through (${pauseSamples} of each, interleaved, ms)`,
      "",
      "Tool round trip: the model's request → its next request (answer, save, `calculate`, save). Answered pause: the answer POST sent → the model's next request (the answer saved and the run resumed, `calculate`, save).",
      "",
      markdownTable(
        ["db", "tool round trip p50", "p95", "answer → next request p50", "p95", "added p50", "ratio p50"],
        pauseRows,
      ),
    ]),
    ...section("queue", [
      `## queue: An enqueued run, against the client chaining the same two messages (${pauseSamples} of each, interleaved, ms)`,
      "",
      "The run ahead's model request → the next run's (the model answers the first after 50 ms). Chained: the client waits for the first run's answer, then sends the second. Enqueued: the second was sent with `on_busy: \"enqueue\"` while the first ran; loopd starts it when the first ends.",
      "",
      markdownTable(["db", "chained p50", "p95", "enqueued p50", "p95", "difference p50", "ratio p50"], queueRows),
    ]),
    ...section("budget", [
      `## budget: Budget checks: the same ${20}-tool-step run with and without limits (${budgetRuns} pairs, interleaved, ms per step)`,
      "",
      "Budgeted: tokens, seconds and cost all set, none reached (so every check runs and none stops the run).",
      "",
      markdownTable(
        ["db", "tool steps", "plain p50", "budgeted p50", "plain mean", "budgeted mean", "ratio (mean)"],
        budgetRows,
      ),
    ]),
    ...section("idle", [
      `## idle: ${followers} idle SSE followers of one run waiting on its model`,
      "",
      "Statements per second the database ran meanwhile (Postgres's own counters; not countable from outside on PGlite), and loopd's resident memory.",
      "",
      markdownTable(["db", "followers", "statements/s", "RSS before (MiB)", "RSS with followers (MiB)"], idleRows),
    ]),
    ...section("floor", [
      "## floor: A long run against the floor",
      "",
      "Per tool step, over all the runs of a row (their fixed costs and final answers included). CPU: the process, plus on Postgres its backends.",
      "",
      ...(longRuns.postgres.length > 0 ? ["### PostgreSQL", "", postgresLongRunTable(longRuns.postgres), ""] : []),
      "### PGlite",
      "",
      pgliteLongRunTable(longRuns.pglite),
    ]),
    ...section("context", [
      "## context: What each model call is sent: a 30-step tool-heavy conversation (files of 1–8 KB read one by one), Anthropic",
      "",
      "Tokens counted by the fake LLM with o200k over the requests exactly as loopd sent them; cache reads and writes by Anthropic's rules (a prefix up to a breakpoint, identical to one an earlier request cached, 1,024 tokens or more). Billed-equivalent: input + 0.1 × cache reads + 1.25 × cache writes.",
      "",
      markdownTable(
        [
          "strategy",
          "requests",
          "input tokens",
          "cache read",
          "cache write",
          "billed-equivalent",
          "of naive",
          "largest request",
          "of naive largest",
        ],
        contextRows.map((r) => [
          r.strategy,
          String(r.requests),
          kTokens(r.inputTokens),
          kTokens(r.cacheRead),
          kTokens(r.cacheWrite),
          kTokens(r.billedEquivalent),
          pct(r.billedEquivalent, naive?.billedEquivalent),
          kTokens(r.largest),
          pct(r.largest, naive?.largest),
        ]),
      ),
      "",
      `A 60-turn conversation (each turn a question, one read_file of 1–4 KB, an answer of a few sentences), Anthropic; trim and summarize with max_input_tokens ${LONG_CONVERSATION_LIMIT}. The summary calls are requests like the others (in every column); their input and the runs' output are also shown apart.`,
      "",
      markdownTable(
        [
          "strategy",
          "requests",
          "input tokens",
          "cache read",
          "cache write",
          "billed-equivalent",
          "of naive",
          "largest request",
          "of naive largest",
          "summary calls",
          "summary input",
          "output (all runs)",
        ],
        longConversationRows.map((r) => [
          r.strategy,
          String(r.requests),
          kTokens(r.inputTokens),
          kTokens(r.cacheRead),
          kTokens(r.cacheWrite),
          kTokens(r.billedEquivalent),
          pct(r.billedEquivalent, longConversationRows[0]?.billedEquivalent),
          kTokens(r.largest),
          pct(r.largest, longConversationRows[0]?.largest),
          String(r.summaryCalls),
          kTokens(r.summaryInput),
          kTokens(r.outputTokens),
        ]),
      ),
    ]),
    ...section("trace", [
      "## trace: The trace: the long runs of floor with TRACE=on against TRACE=off",
      "",
      "Per tool step, over all the runs of a row; CPU: the process, plus on Postgres its backends. Stored B/step: the row's last run's spans as stored (Postgres); export B/step: its compact NDJSON export (tool outputs and answers included), per step.",
      "",
      ...traceTables.flatMap((table) => [table, ""]),
    ]),
    ...section("httptool", [
      `## httptool: Tools by source against the built-in calculate: the same ${20}-tool-step run (${budgetRuns} runs of each, interleaved, ms per step)`,
      "",
      "An HTTP tool (TOOLS_FILE, signed, read-only) answering from a receiver in the bench process; the echo tool of test/mcp's SDK server over stdio (loopd's child) and over Streamable HTTP (in the bench process). Direct: the same call made from the bench process (one POST; the SDK's client over its own stdio child, or over HTTP to the same server). loopd's own: the step's extra time less the direct call (the input checked against its schema in the worker, the signature or the MCP client, the capped read).",
      "",
      markdownTable(["db", "source", "p50 per step", "extra p50", "direct call p50", "loopd's own p50"], httpToolRows),
      "",
      `One step of ${PARALLEL_CALLS} MCP calls (stdio) that each wait ${PARALLEL_CALL_MS} ms on the server: a read-only tool (the calls run at once, up to TOOL_CONCURRENCY) against one that is not (one after another), ms for the step.`,
      "",
      markdownTable(["db", "8 read-only p50", "8 sequential p50", "ratio"], parallelRows),
    ]),
    ...section("auth", [
      `## auth: API keys on against off: the same ${20}-tool-step run and the same read (${budgetRuns} of each, interleaved)`,
      "",
      "Two loopd processes on databases of their own: keys off (tenant default), and keys on (the key looked up on every request, every query scoped by its tenant, the rate limit counting). ms per tool step of the run, and ms of one GET /conversations/:id (the mean of 10 after each run), p50.",
      "",
      markdownTable(
        ["db", "tool steps", "keys off p50", "keys on p50", "per step", "read off p50", "read on p50", "per read"],
        authRows,
      ),
    ]),
    ...section("checks", [
      "## checks: The checks of a plain request: this checkout against BENCH_BASELINE_DIR, the same requests interleaved",
      "",
      "Two loopd processes on databases of their own (keys off), each sent the same GET /conversations/:id and one-call POST …/messages in turn. ms p50 of each, and loopd's own CPU ms per request (the process, from /proc, over the row), with the difference against the older checkout.",
      "",
      markdownTable(
        ["db", "subject", "read p50", "vs before", "message p50", "vs before", "CPU ms/request", "vs before"],
        checksRows,
      ),
    ]),
    ...section("agent", [
      `## agent: An agent's cost to a run: the same run on a conversation from an agent and on one given the same configuration (${positiveInt(process.env.BENCH_AGENT_ROUNDS, 300)} pairs, interleaved)`,
      "",
      "One loopd process; each round a fresh conversation of each kind (not timed), then the same message to each, in turn, the order alternating. ms from the POST …/messages to its answer (the run ended), and loopd's own CPU ms per run (the process, from /proc). text: one model call; tool: calculate and the answer (two model calls, one tool call).",
      "",
      markdownTable(
        [
          "db",
          "run",
          "plain p50",
          "agent p50",
          "p50",
          "plain mean",
          "agent mean",
          "mean",
          "CPU ms plain",
          "CPU ms agent",
          "CPU",
        ],
        agentRows,
      ),
    ]),
    ...section("mcp-a2a", [
      `## mcp-a2a: One agent called over /mcp and A2A against POST …/messages: the same run, interleaved (${positiveInt(process.env.BENCH_CALLER_ROUNDS, 300)} rounds)`,
      "",
      "One loopd process, keys off; an agent with `calculate`, each call a new conversation from it and one run of a tool call and an answer (2 model calls). messages: `POST /conversations` with the agent, then a non-streaming `POST …/messages` (the two requests timed together); mcp: the MCP SDK's client (Streamable HTTP, one session) calling `agent_adder`; a2a: `@a2a-js/sdk`'s client (JSON-RPC, card read once) sending a blocking `SendMessage`. A round calls each once, the order rotating; 20 rounds of warm-up first. Latency as the caller saw it; loopd's CPU from /proc around each call, summed per path over the rounds (10 ms ticks); Postgres CPU: the server's backends serving loopd's database, from /proc around each call (on PGlite the database's work is inside loopd's own CPU); client CPU: this process (the SDK client and the fake LLM) around each call. Added, paired: the median over rounds of the call less the messages call of the same round.",
      "",
      markdownTable(CALLER_COLUMNS, callerRows),
      "",
      ...callerLoad.map((line) => `- ${line}`),
    ]),
    ...section("responses", [
      `## responses: /v1/responses streaming against POST …/messages streaming: the same runs, ${responsesConcurrency} at once (${responsesRounds} rounds of each, interleaved)`,
      "",
      "One loopd process, keys off. Each run on a new conversation: tool: `calculate` then the answer (2 model calls); text: the answer (1 model call). messages: `POST /conversations` then `POST …/messages` with `stream: true` (timed together); responses: `POST /v1/responses` with `stream: true` (its conversation made inside it), both read with fetch; openai sdk: the official client's `responses.stream`. A round starts N runs of one subject and shape at once; the subjects take rounds in turn, their order rotating. Times from the request's start to the first and last SSE event; runs/s: completed runs over the rounds' wall time. Ratios over all rounds, then (in brackets) round by round, each round against the messages round of the same index; † marks a round in which either had runs refused. A refusal (`503` with Retry-After: the overload guard at its defaults, new runs refused while the loop lags or statements wait on the database) is sent again after the wait it asks for, up to 10 times, as the openai client does by itself; a run's times count from its first attempt, so refusals cost their subject time and throughput. Each round starts once `/readyz` answers 200. CPU: loopd's process (and on Postgres the backends serving its database) from /proc over each round, per completed run; client CPU: this process (the clients and the fake model). Machine busy: all cores, others' work included, lowest–highest round.",
      "",
      responsesTable(responsesRows),
      "",
      ...responsesLoad.map((line) => `- ${line}`),
    ]),
    ...section("sandbox", [
      `## sandbox: The tool sandbox per step: the same ${sandboxSteps}-tool-step runs under TOOL_SANDBOX=bwrap and =none (${sandboxRuns} runs of each, interleaved, ms)`,
      "",
      "Two loopd processes on databases of their own. run_command runs `true`, every call approved by the client (the step includes the pause, the answer's POST and the run resumed); the MCP tool is the echo tool of the test server over stdio, started once per process (inside bwrap, or not), `approval: \"never\"`. Per step: the run's wall time over its steps, p50 of the runs; call: the tool call's own `duration_ms` (its `tool_call.completed` event), p50 of all calls.",
      "",
      markdownTable(
        [
          "db",
          "tool",
          "none p50/step",
          "bwrap p50/step",
          "bwrap − none",
          "call none p50",
          "call bwrap p50",
          "call bwrap − none",
        ],
        sandboxRows,
      ),
    ]),
    ...section("guard", [
      `## guard: The overload guard on a busy machine: this checkout against BENCH_BASELINE_DIR (${guardSeconds} s of requests, ${guardRate} of each kind per second to each)`,
      "",
      `K processes spinning (\`node -e "for(;;){}"\`, K = ${guardLoads.map((m) => `${m}×`).join(" and ")} the cores), then both loopds started on that busy machine (a cold start), each sent the same stream without waiting for answers: GET /healthz, GET /conversations/:id, a one-call POST …/messages (non-streaming; on a conversation not busy with another). A refusal is a 503 of the guard (\`details.reason\` \`overloaded\`, or the old guard's \`event_loop_delay\`). The loop's health comes from a probe preloaded into each loopd (\`bench/guard/loop-lag-probe.mjs\`, how late a 50 ms timer fires, independent of either guard): a refusal is a false positive when every tick from 1 s before its answer to 0.5 s after was under ${GUARD_HEALTHY_MS} ms late (half of MAX_EVENT_LOOP_DELAY_MS's default, the new guard's own "healthy"). Also shown: the refusals answered within ${GUARD_HEALTHY_MS} ms of being sent. Rate: false positives over all requests. Requests start once each loopd's /healthz first answers 200.`,
      "",
      markdownTable(GUARD_COLUMNS, guardRows),
    ]),
    ...section("flood", [
      `## flood: A flooding tenant and a quiet one: N streaming runs of tenant A at once, tenant B keeping ${floodQuiet} going (${floodRounds} rounds each, ms)`,
      "",
      `One loopd, API keys on, two tenants: MAX_ACTIVE_RUNS_PER_TENANT=${floodCap}, MAX_STREAMS_PER_TENANT=100 (its default), RATE_LIMIT_PER_MIN out of the way. Each run a streaming tool round trip, as in streams. A round: A starts N at once (conversations created beforehand) while B keeps ${floodQuiet} in flight (each on a conversation created just before, untimed) until A's last answer; then B alone for as long. A's refusals by status and code; B's runs/s and time to its first SSE event with the flood and without it.`,
      "",
      markdownTable(FLOOD_COLUMNS, floodRows),
    ]),
    ...section("chaos", [
      `## chaos: ${chaosRuns} streaming runs against a failing provider: clean, ${chaosFaultPercent}% of model calls failing, and a ${chaosOutageMs / 1000} s outage of the primary`,
      "",
      `One loopd, the primary on OpenAI's wire and a fallback (\`fallbacks\`) on Anthropic's, both the fake LLM; each run a tool call (an HTTP tool whose receiver in the bench process counts executions by tool_call_id) and an answer. Each phase starts its runs evenly over ${(2 * chaosOutageMs) / 1000} s. clean: no faults. faults: ${chaosFaultPercent}% of all model calls (either provider) failing at random, a third each 529, 429 with Retry-After: 1 and a failure mid-stream (half an error event, half a cut connection) (seeded, so runs draw the same faults). outage: the primary answers 503 for the phase's first ${chaosOutageMs / 1000} s. Latency from the request to run.completed; added: against the clean phase of the same run. The streamed text check: text.delta since the step began, less what step.restarted withdrew, against the assistant message saved.`,
      "",
      markdownTable(CHAOS_COLUMNS, chaosRows),
    ]),
    ...section("agentcall", [
      `## agentcall: A child agent's call against a tool call of the same work (${agentCalls} of each, interleaved)`,
      "",
      "The same run twice: the model calls a tool, then answers. Tool call: `lookup` returns the answer at once. Agent call: `agent__helper`, whose child run (its own conversation) makes one model call that returns the same answer. loopd in the bench's process (buildApp, as the tests start it; the fake model answers at once), so its statement counter reads the same on PGlite and Postgres. Call: the model's request → its next request (the call made and its result saved), ms. Statements and CPU: the whole run (this process's CPU, the fake model and the client included), mean per run.",
      "",
      markdownTable(
        [
          "db",
          "subject",
          "call p50",
          "call p99",
          "statements/run",
          "CPU ms/run",
          "agent − tool (p50 · statements · CPU)",
        ],
        agentCallRows,
      ),
    ]),
    ...section("images", [
      `## images: Images already in a conversation: the same ${20}-tool-step run on a conversation whose first message held 10 images (about 300 KB each) against one holding none (${budgetRuns} runs of each, interleaved)`,
      "",
      "Anthropic's wire format (the fake LLM, which decodes every image it is sent). ms per tool step (p50), loopd's own CPU ms per tool step (the process, from /proc, mean), the size of the last request, and the ratios with images over without.",
      "",
      markdownTable(
        ["db", "images", "ms/step p50", "loopd CPU ms/step", "last request", "with ÷ without (ms · CPU)"],
        imageRows,
      ),
    ]),
    ...section("webhooks", [
      `## webhooks: Webhook latency: a run's end to its webhook at the receiver (${webhookRuns} runs, one after another, ms)`,
      "",
      "From the run's completed_at (the database's clock, on this machine) to the receiver, in the bench process, having read and verified the signed POST.",
      "",
      markdownTable(["db", "runs", "p50", "p99", "max"], webhookRows),
    ]),
    ...section("first-start", [
      `## first-start: a fresh clone's first \`npm start\` against a restart (${firstStartRounds} clone(s), ${firstStartRestarts} restarts each, s)`,
      "",
      "A clone of this checkout's HEAD with its node_modules linked in; `npm start` until /healthz answers 200 (LLM_PROVIDER=mock, the clone's own data/). The first start builds the server and the playground and creates the embedded database; a restart builds nothing. Builds: what scripts/build-if-stale.mjs reported (they run side by side). Goal: first ÷ restart ≤ 3×.",
      "",
      markdownTable(
        ["round", "first start", "server build", "playground build", "restart p50", "first ÷ restart"],
        firstStartRows.map(({ round, first, restarts }) => {
          const restart = percentile(
            restarts.map((r) => r.totalMs).sort((a, b) => a - b),
            0.5,
          );
          const s = (ms?: number) => (ms === undefined ? "–" : (ms / 1000).toFixed(2));
          return [
            String(round),
            s(first.totalMs),
            s(first.builds.server),
            s(first.builds.web),
            s(restart),
            `${(first.totalMs / restart).toFixed(1)}×`,
          ];
        }),
      ),
    ]),
    ...section("scale", scaleLines),
    ...section("streams", [
      `## streams: ${streams.join(", ")} streaming runs at once (tool round trips, ${streamRounds} rounds each)`,
      "",
      streamsTable(streamRows),
    ]),
  ].join("\n");
  process.stdout.write(out);
}

await main();
