import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startFakeLlm } from "../test/fake-llm/server.js";
import { createBenchDatabase, type BenchDatabase } from "./bench-database.js";
import { percentile } from "./measure.js";
import { buildOnce, startLoopdProcess, type LoopdProcess } from "./start-loopd-process.js";

export type RouteClass = "health" | "read" | "run";

/** What one subject was answered over the window, with so many busy processes on the machine. */
export interface GuardRow {
  subject: "loopd" | "before";
  busy: number;
  requests: number;
  /** 503s of the overload guard (`details.reason` `overloaded`, or the old guard's `event_loop_delay`), by route class. */
  refused: Record<RouteClass, number>;
  /** Of those, the ones answered within `healthyMs` of being sent: the process was responsive, so the refusal was a false positive. */
  falsePositives: number;
  /** Any other answer than a 2xx or a guard refusal (a 409, a timeout, a connection error), counted. */
  other: Record<string, number>;
  /** ms from sending to the answer, p50 and p99, of all requests answered. */
  latencyP50: number;
  latencyP99: number;
}

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const GUARD_REASONS = new Set(["overloaded", "event_loop_delay"]);
/** A request that gets no answer in this long counts as timed out. */
const REQUEST_TIMEOUT_MS = 15_000;
/** A run not sent: all its subject's conversations were busy with one (shown among the others, not counted as a request). */
const NOT_SENT = "not sent (conversations busy)";

/**
 * (q) The overload guard on a loaded machine: `busy` processes spinning
 * (bounded in time, killed at the end), then this checkout and the one in
 * `baselineDir` started together on that busy machine (a cold start), each
 * sent the same steady stream for `seconds`: per tick, a `GET /healthz`, a
 * `GET /conversations/:id` and a one-call `POST …/messages` (non-streaming)
 * to each, without waiting for the answers. A guard refusal answered within
 * `healthyMs` of being sent is a false positive: a process that answers
 * that fast had an event loop turning, whatever the guard made of its lag.
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
      rows.push(...(await measureUnderLoad({ serverUrl, baselineDir, busy, seconds, perSecond, healthyMs, env: { LLM_PROVIDER: "openai", OPENAI_API_KEY: "bench", OPENAI_BASE_URL: `${llm.url}/v1`, LOG_LEVEL: logLevel } })));
    }
    return rows;
  } finally {
    llm.respond = null;
    await llm.close();
  }
}

interface Outcome {
  route: RouteClass;
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
  const subjects: LoopdProcess[] = [];
  try {
    // Each spinner ends by itself after the window and a margin, should this process die before killing it.
    const boundMs = (seconds + 180) * 1000;
    for (let i = 0; i < busy; i++) spinners.push(spawn(process.execPath, ["-e", `const end = Date.now() + ${boundMs}; while (Date.now() < end) {}`], { stdio: "ignore" }));
    const started = await Promise.allSettled([
      startLoopdProcess({ env: { ...databases[0]!.env, ...env } }),
      startLoopdProcess({ env: { ...databases[1]!.env, ...env }, checkout: baselineDir }),
    ]);
    for (const s of started) if (s.status === "fulfilled") subjects.push(s.value);
    for (const s of started) if (s.status === "rejected") throw s.reason;
    const names: GuardRow["subject"][] = ["loopd", "before"];
    // A few conversations each, created (retried past refusals) as the stream starts; a run goes to one not busy with another.
    const pools = await Promise.all(subjects.map((p) => Promise.all(Array.from({ length: 10 }, () => createConversation(p.url)))));
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
        inFlight.push(timed(p.url, `/conversations/${pool[Math.floor(Math.random() * pool.length)]}`, "read").then(record));
        const conv = free[s]!.shift();
        if (conv === undefined) {
          record({ route: "run", latency: null, kind: NOT_SENT });
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
    return subjects.map((_, s) => rowOf({ subject: names[s]!, busy, outcomes: outcomes[s]!, healthyMs }));
  } finally {
    for (const spinner of spinners) spinner.kill("SIGKILL");
    await Promise.all(subjects.map((p) => p.stop()));
    await Promise.all(databases.map((d) => d.drop()));
  }
}

function rowOf({ subject, busy, outcomes, healthyMs }: { subject: GuardRow["subject"]; busy: number; outcomes: Outcome[]; healthyMs: number }): GuardRow {
  const refused: Record<RouteClass, number> = { health: 0, read: 0, run: 0 };
  const other: Record<string, number> = {};
  let falsePositives = 0;
  for (const o of outcomes) {
    if (o.kind === "guard") {
      refused[o.route]++;
      if (o.latency !== null && o.latency < healthyMs) falsePositives++;
    } else if (o.kind !== "2xx") other[o.kind] = (other[o.kind] ?? 0) + 1;
  }
  const latencies = outcomes.flatMap((o) => (o.latency === null ? [] : [o.latency])).sort((a, b) => a - b);
  return { subject, busy, requests: outcomes.filter((o) => o.kind !== NOT_SENT).length, refused, falsePositives, other, latencyP50: percentile(latencies, 0.5), latencyP99: percentile(latencies, 0.99) };
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
    if (res.ok) return { route, latency, kind: "2xx" };
    return { route, latency, kind: res.status === 503 && GUARD_REASONS.has(reasonOf(text)) ? "guard" : String(res.status) };
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown }; name?: string }).cause;
    return { route, latency: null, kind: (error as Error).name === "TimeoutError" ? "timeout" : typeof cause?.code === "string" ? cause.code : String(error) };
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
    const res = await fetch(`${url}/conversations`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const json = (await res.json()) as { id?: string };
    if (res.ok && json.id) return json.id;
    if (res.status !== 503) throw new Error(`POST /conversations: ${res.status} ${JSON.stringify(json)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
