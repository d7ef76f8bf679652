import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { createBenchDatabase } from "../lib/bench-database.js";
import { closeSubjects } from "../lib/close-subjects.js";
import { percentile } from "../lib/measure.js";
import { watchBackendsCpu } from "../lib/postgres-backends-cpu.js";
import { cpuMsOf, machineBusyMs } from "../lib/proc-cpu.js";
import type { Scenario } from "../lib/run-shapes.js";
import { openServerMonitor, type ServerMonitor } from "../lib/server-monitor.js";
import { startLoopdProcess, type LoopdProcess, openAiOnFakeLlm } from "../lib/start-loopd-process.js";
import {
  RESPONSE_SUBJECTS,
  respondToShapes,
  responseCallers,
  type ResponseSubject,
  type StreamedRun,
} from "./response-callers.js";

/** One round of one subject: `concurrency` runs started at once. */
export interface ResponsesRound {
  runs: number;
  completed: number;
  wallMs: number;
  /** Times to the first and last events of the round's runs (from its first attempt) (ms, sorted; the first of every run that sent one, the last of the completed). */
  ttfe: number[];
  ttle: number[];
  failures: string[];
  /** loopd's own CPU over the round (ms, /proc), and the Postgres backends serving its database (NaN on PGlite). */
  loopdCpuMs: number;
  backendsCpuMs: number;
  /** The bench process's CPU (the client, and the fake model, the same work for every subject). */
  clientCpuMs: number;
  /** Refusals (`503`) sent again after their Retry-After; the run's times count from its first attempt. */
  refusals: number;
  /** Model calls the fake answered during the round (a tool run makes 2, a text run 1). */
  modelCalls: number;
  /** The machine's busy share of all its cores over the round (others' work included). */
  machineBusy: number;
}

export interface ResponsesRow {
  shape: Scenario;
  subject: ResponseSubject;
  rounds: ResponsesRound[];
}

export interface ResponsesStreams {
  rows: ResponsesRow[];
  /** 1-minute load average before the first round and after the last. */
  loadBefore: number;
  loadAfter: number;
}

const WARMUP = 20;

/**
 * responses: the same streaming runs through `POST /v1/responses` and
 * through `POST /conversations/:id/messages` (and the official openai
 * client's `responses.stream`), `concurrency` at once, on one loopd process.
 * A round starts `concurrency` runs of one subject and one shape together;
 * every shape and subject takes a round in turn, the subjects' order
 * rotating round by round, so the machine's load (other work on it)
 * falls on all alike and the ratios are measured in the same run.
 */
export async function measureResponsesStreams({
  serverUrl,
  concurrency,
  rounds,
  shapes: shapeNames,
  subjects: subjectNames,
  logLevel,
  progress,
}: {
  serverUrl: string | undefined;
  concurrency: number;
  rounds: number;
  /** Of `tool` and `text`. */
  shapes: string[];
  /** Of RESPONSE_SUBJECTS; messages always. */
  subjects: string[];
  logLevel: string;
  progress: (line: string) => void;
}): Promise<ResponsesStreams> {
  const unknown = shapeNames.filter((s) => s !== "tool" && s !== "text");
  if (unknown.length > 0)
    throw new Error(`BENCH_RESPONSES_SHAPES: unknown ${unknown.join(", ")}; pick from tool, text`);
  const shapes = shapeNames as Scenario[];
  const subjects = RESPONSE_SUBJECTS.filter((s) => s === "messages" || subjectNames.includes(s));
  const llm = await startFakeLlm();
  let modelCalls = 0;
  llm.respond = (req) => {
    modelCalls++;
    // Kept from growing over tens of thousands of calls.
    llm.requests.length = 0;
    return respondToShapes(req);
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-responses-"));
  const database = await createBenchDatabase(serverUrl);
  const processes: LoopdProcess[] = [];
  let monitor: ServerMonitor | undefined;
  try {
    if (serverUrl && database.name) monitor = await openServerMonitor(serverUrl);
    const loopd = await startLoopdProcess({
      env: {
        ...database.env,
        ...openAiOnFakeLlm(llm.url),
        LOG_LEVEL: logLevel,
        WORKSPACE_DIR: dir,
      },
    });
    processes.push(loopd);
    const callers = responseCallers(loopd.url);
    // Warm-up: connections opened, every path compiled.
    for (const shape of shapes)
      for (const subject of subjects)
        await Promise.all(Array.from({ length: WARMUP }, () => callers.run[subject](shape)));
    const rows: ResponsesRow[] = shapes.flatMap((shape) =>
      subjects.map((subject) => ({ shape, subject, rounds: [] as ResponsesRound[] })),
    );
    const loadBefore = os.loadavg()[0] ?? Number.NaN;
    for (let round = 0; round < rounds; round++) {
      for (const shape of shapes) {
        for (let k = 0; k < subjects.length; k++) {
          const subject = subjects[(round + k) % subjects.length]!;
          // Each round starts on a loopd that takes new runs: the guard's refusals of the round before have passed.
          await untilReady(loopd.url);
          const measured = await measuredRound({
            start: () => callers.run[subject](shape),
            retries: callers.retries,
            concurrency,
            loopdPid: loopd.pid,
            monitor,
            databaseName: database.name,
            modelCalls: () => modelCalls,
          });
          rows.find((r) => r.shape === shape && r.subject === subject)!.rounds.push(measured);
          progress(
            `  round ${round + 1}/${rounds}, ${shape}, ${subject}: ${((measured.completed / measured.wallMs) * 1000).toFixed(1)} runs/s, first event p99 ${percentile(measured.ttfe, 0.99).toFixed(0)} ms, ${measured.refusals} refusals sent again, ${measured.failures.length} failed, machine ${(measured.machineBusy * 100).toFixed(0)}% busy`,
          );
        }
      }
    }
    return { rows, loadBefore, loadAfter: os.loadavg()[0] ?? Number.NaN };
  } finally {
    await monitor?.close();
    await closeSubjects({ llm, processes, databases: [database], dir });
  }
}

/** Until `/readyz` answers 200 (the overload guard no longer refuses new runs), as a load balancer would wait; at most 2 minutes. */
async function untilReady(url: string): Promise<void> {
  const deadline = performance.now() + 120_000;
  while ((await fetch(`${url}/readyz`)).status !== 200) {
    if (performance.now() > deadline) throw new Error("loopd did not become ready again within 2 minutes");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function measuredRound({
  start,
  concurrency,
  loopdPid,
  monitor,
  databaseName,
  modelCalls,
  retries,
}: {
  start: () => Promise<StreamedRun>;
  concurrency: number;
  loopdPid: number;
  monitor: ServerMonitor | undefined;
  databaseName: string | undefined;
  modelCalls: () => number;
  retries: () => number;
}): Promise<ResponsesRound> {
  const backends =
    monitor?.postmasterPid && databaseName
      ? watchBackendsCpu({ postmasterPid: monitor.postmasterPid, databaseName, ignorePids: [monitor.backendPid] })
      : null;
  const calls0 = modelCalls();
  const retries0 = retries();
  const cpu0 = cpuMsOf(loopdPid) ?? 0;
  const busy0 = machineBusyMs();
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: concurrency }, start));
  const wallMs = performance.now() - t0;
  const client = process.cpuUsage(client0);
  const busy = machineBusyMs() - busy0;
  const loopdCpuMs = (cpuMsOf(loopdPid) ?? 0) - cpu0;
  const backendsCpuMs = backends?.stop().ownMs ?? Number.NaN;
  const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
  const failures = outcomes.flatMap((o) => (o.failure === null ? [] : [o.failure]));
  return {
    runs: concurrency,
    completed: concurrency - failures.length,
    wallMs,
    ttfe: sorted(outcomes.flatMap((o) => (o.ttfe === null ? [] : [o.ttfe]))),
    ttle: sorted(outcomes.flatMap((o) => (o.failure === null && o.ttle !== null ? [o.ttle] : []))),
    failures,
    loopdCpuMs,
    backendsCpuMs,
    modelCalls: modelCalls() - calls0,
    refusals: retries() - retries0,
    clientCpuMs: (client.user + client.system) / 1000,
    machineBusy: busy / (wallMs * os.cpus().length),
  };
}
