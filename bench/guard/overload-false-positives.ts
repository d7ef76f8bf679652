import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { createBenchDatabase, type BenchDatabase } from "../lib/bench-database.js";
import { percentile } from "../lib/measure.js";
import { buildOnce, startLoopdProcess, type LoopdProcess, openAiOnFakeLlm } from "../lib/start-loopd-process.js";

export type RouteClass = "health" | "read" | "run";

/** What one subject was answered over the window, with so many busy processes on the machine. */
export interface GuardRow {
  subject: "loopd" | "before";
  busy: number;
  requests: number;
  /** 503s of the overload guard (`details.reason` `overloaded`, or the old guard's `event_loop_delay`), by route class. */
  refused: Record<RouteClass, number>;
  /** Of those, the ones made while the event loop was healthy (the probe's ticks, over the second before the answer, all under `healthyMs` late): false positives. */
  falsePositives: number;
  /** Of those, the ones answered within `healthyMs` of being sent. */
  answeredQuickly: number;
  /** Any other answer than a 2xx or a guard refusal (a 409, a timeout, a connection error), counted. */
  other: Record<string, number>;
  /** ms from sending to the answer, p50 and p99, of all requests answered. */
  latencyP50: number;
  latencyP99: number;
}

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const LAG_PROBE = fileURLToPath(new URL("./loop-lag-probe.mjs", import.meta.url));
/** The loop's health is judged over this long before a refusal's answer (the guards sample every second), and a little after it (a loop blocked at the answer shows in the next tick). */
const JUDGED_BEFORE_MS = 1_000;
const JUDGED_AFTER_MS = 500;
const GUARD_REASONS = new Set(["overloaded", "event_loop_delay"]);
/** A request that gets no answer in this long counts as timed out. */
const REQUEST_TIMEOUT_MS = 15_000;
/** A start on a machine kept busy on purpose may take minutes. */
const START_WITHIN_MS = 180_000;
/** A run not sent: all its subject's conversations were busy with one (shown among the others, not counted as a request). */
const NOT_SENT = "not sent (conversations busy)";

/**
 * guard: The overload guard on a loaded machine: `busy` processes spinning
 * (bounded in time, killed at the end), then this checkout and the one in
 * `baselineDir` started together on that busy machine (a cold start), each
 * sent the same steady stream for `seconds`: per tick, a `GET /healthz`, a
 * `GET /conversations/:id` and a one-call `POST …/messages` (non-streaming)
 * to each, without waiting for the answers. Each loopd has a probe
 * preloaded (`loop-lag-probe.mjs`: how late a 50 ms timer fires); a guard
 * refusal is a false positive when every tick of the probe from a second
 * before its answer to half a second after was less than `healthyMs` late:
 * the event loop was turning, whatever the guard made of its lag.
 */
export async function measureGuardFalsePositives({
  serverUrl,
  baselineDir,
  busyCounts,
  seconds,
  perSecond,
  healthyMs,
  logLevel,
  progress,
}: {
  serverUrl: string | undefined;
  baselineDir: string;
  busyCounts: number[];
  seconds: number;
  /** Requests of each class per second to each subject. */
  perSecond: number;
  healthyMs: number;
  logLevel: string;
  progress: (line: string) => void;
}): Promise<GuardRow[]> {
  // Built before the machine is loaded: the cold start measured is loopd's, not tsc's.
  if (process.env.BENCH_LOOPD_FROM !== "source") for (const checkout of [repoRoot, baselineDir]) buildOnce(checkout);
  const llm = await startFakeLlm();
  llm.respond = () => {
    llm.requests.length = 0;
    return { text: "ok" };
  };
  const rows: GuardRow[] = [];
  try {
    for (const busy of busyCounts) {
      progress(`${busy} busy processes; both loopds started on the busy machine, ${seconds} s of requests`);
      rows.push(
        ...(await measureUnderLoad({
          serverUrl,
          baselineDir,
          busy,
          seconds,
          perSecond,
          healthyMs,
          env: {
            ...openAiOnFakeLlm(llm.url),
            LOG_LEVEL: logLevel,
          },
        })),
      );
    }
    return rows;
  } finally {
    llm.respond = null;
    await llm.close();
  }
}

interface Outcome {
  route: RouteClass;
  /** When the answer came (epoch ms, as the probe's ticks). */
  answeredAt: number;
  /** ms to the answer; null when none came. */
  latency: number | null;
  /** "2xx", "guard", or what else it was ("409", "timeout", "ECONNRESET"). */
  kind: string;
}

async function measureUnderLoad({
  serverUrl,
  baselineDir,
  busy,
  seconds,
  perSecond,
  healthyMs,
  env,
}: {
  serverUrl: string | undefined;
  baselineDir: string;
  busy: number;
  seconds: number;
  perSecond: number;
  healthyMs: number;
  env: Record<string, string>;
}): Promise<GuardRow[]> {
  const databases: BenchDatabase[] = [await createBenchDatabase(serverUrl), await createBenchDatabase(serverUrl)];
  const spinners: ChildProcess[] = [];
  const lagDir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-lag-"));
  const lagFiles = ["loopd", "before"].map((name) => path.join(lagDir, `${name}.lag`));
  const probed = (s: number) => ({ NODE_OPTIONS: `--import=${LAG_PROBE}`, BENCH_LAG_FILE: lagFiles[s]! });
  const subjects: LoopdProcess[] = [];
  try {
    // Each spinner ends by itself after the window and a margin, should this process die before killing it.
    const boundMs = (seconds + START_WITHIN_MS / 1000 + 120) * 1000;
    for (let i = 0; i < busy; i++)
      spinners.push(
        spawn(process.execPath, ["-e", `const end = Date.now() + ${boundMs}; while (Date.now() < end) {}`], {
          stdio: "ignore",
        }),
      );
    const started = await Promise.allSettled([
      startLoopdProcess({ env: { ...databases[0]!.env, ...env, ...probed(0) }, healthWithinMs: START_WITHIN_MS }),
      startLoopdProcess({
        env: { ...databases[1]!.env, ...env, ...probed(1) },
        checkout: baselineDir,
        healthWithinMs: START_WITHIN_MS,
      }),
    ]);
    for (const s of started) if (s.status === "fulfilled") subjects.push(s.value);
    for (const s of started) if (s.status === "rejected") throw s.reason;
    const names: GuardRow["subject"][] = ["loopd", "before"];
    // A few conversations each, created (retried past refusals) as the stream starts; a run goes to one not busy with another.
    const pools = await Promise.all(
      subjects.map((p) => Promise.all(Array.from({ length: 10 }, () => createConversation(p.url)))),
    );
    const outcomes: Outcome[][] = subjects.map(() => []);
    const inFlight: Promise<void>[] = [];
    const free = pools.map((pool) => [...pool]);
    const end = performance.now() + seconds * 1000;
    const tickMs = 1000 / perSecond;
    for (let next = performance.now(); next < end; next += tickMs) {
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
      for (const [s, p] of subjects.entries()) {
        const record = (o: Outcome) => void outcomes[s]!.push(o);
        inFlight.push(timed(p.url, "/healthz", "health").then(record));
        const pool = pools[s]!;
        inFlight.push(
          timed(p.url, `/conversations/${pool[Math.floor(Math.random() * pool.length)]}`, "read").then(record),
        );
        const conv = free[s]!.shift();
        if (conv === undefined) {
          record({ route: "run", answeredAt: epochNow(), latency: null, kind: NOT_SENT });
          continue;
        }
        inFlight.push(
          timed(p.url, `/conversations/${conv}/messages`, "run", { content: "Say ok." }).then((o) => {
            free[s]!.push(conv);
            record(o);
          }),
        );
      }
    }
    await Promise.all(inFlight);
    return subjects.map((_, s) => {
      const ticks = ticksOf(lagFiles[s]!);
      // No tick at all would make every refusal look like one on a stalled loop.
      if (ticks.length === 0) throw new Error(`the lag probe wrote nothing for ${names[s]} (${lagFiles[s]})`);
      return rowOf({ subject: names[s]!, busy, outcomes: outcomes[s]!, healthyMs, ticks });
    });
  } finally {
    for (const spinner of spinners) spinner.kill("SIGKILL");
    await Promise.all(subjects.map((p) => p.stop()));
    await Promise.all(databases.map((d) => d.drop()));
    rmSync(lagDir, { recursive: true, force: true });
  }
}

const epochNow = () => performance.timeOrigin + performance.now();

/** The probe's ticks: when (epoch ms) and how late (ms), in order. */
function ticksOf(file: string): Array<{ at: number; late: number }> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [at, late] = line.split(" ").map(Number);
      return { at: at!, late: late! };
    });
}

/** Whether the loop turned within `healthyMs` at every tick around `at`; no tick there at all is a loop that did not turn. */
function healthyAround(ticks: Array<{ at: number; late: number }>, at: number, healthyMs: number): boolean {
  const near = ticks.filter((t) => t.at >= at - JUDGED_BEFORE_MS && t.at <= at + JUDGED_AFTER_MS);
  return near.length > 0 && near.every((t) => t.late < healthyMs);
}

function rowOf({
  subject,
  busy,
  outcomes,
  healthyMs,
  ticks,
}: {
  subject: GuardRow["subject"];
  busy: number;
  outcomes: Outcome[];
  healthyMs: number;
  ticks: Array<{ at: number; late: number }>;
}): GuardRow {
  const refused: Record<RouteClass, number> = { health: 0, read: 0, run: 0 };
  const other: Record<string, number> = {};
  let falsePositives = 0;
  let answeredQuickly = 0;
  for (const o of outcomes) {
    if (o.kind === "guard") {
      refused[o.route]++;
      if (healthyAround(ticks, o.answeredAt, healthyMs)) falsePositives++;
      if (o.latency !== null && o.latency < healthyMs) answeredQuickly++;
    } else if (o.kind !== "2xx") other[o.kind] = (other[o.kind] ?? 0) + 1;
  }
  const latencies = outcomes.flatMap((o) => (o.latency === null ? [] : [o.latency])).sort((a, b) => a - b);
  return {
    subject,
    busy,
    requests: outcomes.filter((o) => o.kind !== NOT_SENT).length,
    refused,
    falsePositives,
    answeredQuickly,
    other,
    latencyP50: percentile(latencies, 0.5),
    latencyP99: percentile(latencies, 0.99),
  };
}

/** One request, timed from its sending to its whole answer, classified. */
async function timed(url: string, at: string, route: RouteClass, body?: unknown): Promise<Outcome> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${url}${at}`, {
      method: body === undefined ? "GET" : "POST",
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    const latency = performance.now() - t0;
    const answeredAt = epochNow();
    if (res.ok) return { route, answeredAt, latency, kind: "2xx" };
    return {
      route,
      answeredAt,
      latency,
      kind: res.status === 503 && GUARD_REASONS.has(reasonOf(text)) ? "guard" : String(res.status),
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown }; name?: string }).cause;
    return {
      route,
      answeredAt: epochNow(),
      latency: null,
      kind:
        (error as Error).name === "TimeoutError"
          ? "timeout"
          : typeof cause?.code === "string"
            ? cause.code
            : String(error),
    };
  }
}

function reasonOf(text: string): string {
  try {
    return String((JSON.parse(text) as { error?: { details?: { reason?: unknown } } }).error?.details?.reason ?? "");
  } catch {
    return "";
  }
}

/** A conversation, asked for again while the guard refuses (a process starting on a busy machine may). */
async function createConversation(url: string): Promise<string> {
  for (;;) {
    const res = await fetch(`${url}/conversations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const json = (await res.json()) as { id?: string };
    if (res.ok && json.id) return json.id;
    if (res.status !== 503) throw new Error(`POST /conversations: ${res.status} ${JSON.stringify(json)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
