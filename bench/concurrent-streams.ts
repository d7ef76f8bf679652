import os from "node:os";
import { startFakeLlm } from "../test/fake-llm/server.js";
import { isEvent, readSse } from "../test/helpers/sse-client.js";
import { createBenchDatabase, type BenchDatabase } from "./bench-database.js";
import { loopdClient } from "./loopd-client.js";
import { percentile } from "./measure.js";
import { SCENARIOS } from "./scenarios.js";
import { startLoopdProcess, type LoopdProcess } from "./start-loopd-process.js";

export interface StreamsRow {
  version: "loopd" | "loopd before";
  runs: number;
  /** Runs that did not answer 200 or did not end with run.completed. */
  failures: number;
  /** Why, counted: "503", "ECONNRESET", "run.failed", … */
  failureReasons: Record<string, number>;
  runsPerSecond: number;
  /** Time to the first SSE event, from the request's start (ms). */
  ttfeP50: number;
  ttfeP99: number;
  /** 1-minute load average after its last round. */
  load1: number;
}

interface Version {
  name: StreamsRow["version"];
  loopd: LoopdProcess;
  database: BenchDatabase;
  ttfe: number[];
  failureReasons: Record<string, number>;
  runs: number;
  wallMs: number;
  load1: number;
}

/**
 * (f) `concurrency` streaming runs started at once (`stream: true`), each on
 * a conversation of its own, each a tool round trip (model → calculate →
 * model). loopd and, given `baselineDir`, an older loopd take turns, round
 * by round, so that both see the same machine.
 */
export async function measureConcurrentStreams({
  serverUrl,
  baselineDir,
  logLevel,
  concurrency,
  rounds,
  progress,
}: {
  serverUrl: string | undefined;
  baselineDir: string | undefined;
  logLevel: string;
  concurrency: number;
  rounds: number;
  progress: (line: string) => void;
}): Promise<StreamsRow[]> {
  const llm = await startFakeLlm();
  const respond = SCENARIOS.tool.respond;
  llm.respond = (req) => {
    llm.requests.length = 0;
    return respond(req);
  };
  const env = { LLM_PROVIDER: "openai", OPENAI_API_KEY: "bench", OPENAI_BASE_URL: `${llm.url}/v1`, LOG_LEVEL: logLevel };
  const versions: Version[] = [];
  try {
    const start = async (name: Version["name"], checkout?: string) => {
      const database = await createBenchDatabase(serverUrl);
      const loopd = await startLoopdProcess({ env: { ...env, ...database.env }, ...(checkout && { checkout }) });
      versions.push({ name, loopd, database, ttfe: [], failureReasons: {}, runs: 0, wallMs: 0, load1: 0 });
    };
    await start("loopd");
    if (baselineDir) await start("loopd before", baselineDir);
    for (const version of versions) await streamRound(version.loopd.url, Math.min(20, concurrency));
    for (let round = 1; round <= rounds; round++) {
      for (const version of versions) {
        progress(`${serverUrl ? "postgres" : "pglite"}: ${version.name}, ${concurrency} streaming runs at once (round ${round}/${rounds})`);
        const result = await streamRound(version.loopd.url, concurrency);
        version.ttfe.push(...result.ttfe);
        for (const reason of result.failures) version.failureReasons[reason] = (version.failureReasons[reason] ?? 0) + 1;
        version.runs += concurrency;
        version.wallMs += result.wallMs;
        version.load1 = os.loadavg()[0] ?? Number.NaN;
      }
    }
    return versions.map(({ name, ttfe, failureReasons, runs, wallMs, load1 }) => {
      const sorted = [...ttfe].sort((a, b) => a - b);
      const failures = Object.values(failureReasons).reduce((sum, n) => sum + n, 0);
      return {
        version: name,
        runs,
        failures,
        failureReasons,
        runsPerSecond: ((runs - failures) / wallMs) * 1000,
        ttfeP50: percentile(sorted, 0.5),
        ttfeP99: percentile(sorted, 0.99),
        load1,
      };
    });
  } finally {
    for (const version of versions) {
      await version.loopd.stop();
      await version.database.drop();
    }
    await llm.close();
  }
}

/** `count` streaming runs started together on fresh conversations (created beforehand, untimed). */
async function streamRound(url: string, count: number): Promise<{ ttfe: number[]; failures: string[]; wallMs: number }> {
  const client = loopdClient(url);
  const conversations: string[] = [];
  for (let i = 0; i < count; i++) conversations.push(await client.createConversation());
  const started = performance.now();
  const outcomes = await Promise.all(conversations.map((id) => streamRun(url, id)));
  const wallMs = performance.now() - started;
  const ttfe = outcomes.flatMap((o) => (o.ttfe === null ? [] : [o.ttfe]));
  return { ttfe, failures: outcomes.flatMap((o) => (o.failure === null ? [] : [o.failure])), wallMs };
}

/**
 * One streaming run, read to its end: when its first event came, and why it
 * failed if it did not complete (its status, its last event, or the
 * connection's error code).
 */
async function streamRun(url: string, conversationId: string): Promise<{ ttfe: number | null; failure: string | null }> {
  const started = performance.now();
  let ttfe: number | null = null;
  try {
    const res = await fetch(`${url}/conversations/${conversationId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: SCENARIOS.tool.prompt, stream: true }),
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      return { ttfe, failure: String(res.status) };
    }
    let last = "none";
    for await (const item of readSse(res)) {
      if (!isEvent(item)) continue;
      ttfe ??= performance.now() - started;
      last = item.event;
    }
    return { ttfe, failure: last === "run.completed" ? null : last };
  } catch (error) {
    return { ttfe, failure: errorCode(error) };
  }
}

function errorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === "string" ? cause.code : String(error);
}
