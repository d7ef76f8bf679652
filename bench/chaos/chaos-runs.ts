import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { startFakeLlm, type FakeTurn, type RecordedRequest } from "../../test/support/fake-llm/server.js";
import { isEvent, readSse } from "../../test/support/helpers/sse-client.js";
import { seeded } from "../../test/support/helpers/tool-heavy-conversation.js";
import { createBenchDatabase } from "../lib/bench-database.js";
import { percentile } from "../lib/measure.js";
import { startLoopdProcess } from "../lib/start-loopd-process.js";

/** One phase of the chaos scenario: the same runs under one fault plan. */
export interface ChaosRow {
  phase: "clean" | "faults" | "outage";
  runs: number;
  completed: number;
  /** Why the others did not complete (their last event or status), counted. */
  failures: Record<string, number>;
  /** Model calls the fake answered with a fault, of all it received. */
  faults: number;
  calls: number;
  /** Tool calls the counter received more than once (by tool_call_id), and all it received. */
  duplicateExecutions: number;
  executions: number;
  /** Steps whose streamed text, less what `step.restarted` withdrew, differs from the saved answer. */
  textMismatches: number;
  retries: number;
  fallbacks: number;
  /** From the request to `run.completed` (ms). */
  p50: number;
  p99: number;
}

const PRIMARY = { provider: "openai", model: "gpt-chaos" } as const;
const FALLBACK = { provider: "anthropic", model: "claude-chaos" } as const;

/**
 * chaos: one loopd with the primary on OpenAI's wire and a fallback on
 * Anthropic's, both the fake LLM; each run makes a tool call (an HTTP tool
 * whose receiver, in this process, counts executions by tool_call_id) and
 * answers. Three phases of `runs` streaming runs: clean; with `faultShare`
 * of all model calls failing at random (529, 429 with `Retry-After: 1`, an
 * error in the middle of the stream); and an outage of the primary for
 * `outageMs` from the phase's start. Each phase starts its runs evenly over
 * twice `outageMs`, so their latencies compare. Every phase's runs
 * should all complete, no tool run twice, and every step's streamed text add
 * up to its saved answer.
 */
export async function measureChaos({
  serverUrl,
  runs,
  faultShare,
  outageMs,
  logLevel,
  seed = 42,
  progress,
}: {
  serverUrl: string | undefined;
  runs: number;
  faultShare: number;
  outageMs: number;
  logLevel: string;
  seed?: number;
  progress: (line: string) => void;
}): Promise<ChaosRow[]> {
  const llm = await startFakeLlm();
  const counter = await startExecutionCounter();
  const dir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-chaos-"));
  const toolsFile = path.join(dir, "tools.json");
  writeFileSync(
    toolsFile,
    JSON.stringify({
      http: [
        {
          name: "record_step",
          description: "Record a step.",
          input_schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
          url: counter.url,
          approval: "never",
        },
      ],
    }),
  );
  const database = await createBenchDatabase(serverUrl);
  const loopd = await startLoopdProcess({
    env: {
      ...database.env,
      LLM_PROVIDER: PRIMARY.provider,
      OPENAI_API_KEY: "bench",
      OPENAI_BASE_URL: `${llm.url}/v1`,
      ANTHROPIC_API_KEY: "bench",
      ANTHROPIC_BASE_URL: llm.url,
      TOOLS_FILE: toolsFile,
      WORKSPACE_DIR: dir,
      LOG_LEVEL: logLevel,
    },
  });
  // Seeded, so two runs of the bench draw the same faults.
  const random = seeded(seed);
  let plan: (req: RecordedRequest) => FakeTurn | null = () => null;
  let faults = 0;
  llm.respond = (req) => {
    llm.requests.length = 0;
    const fault = plan(req);
    if (fault) {
      faults++;
      return fault;
    }
    const messages = req.body.messages as Array<{ role: string; content: unknown }>;
    const last = messages.at(-1);
    const afterTool =
      last?.role === "tool" ||
      (Array.isArray(last?.content) && last.content.some((b: { type?: string }) => b.type === "tool_result"));
    return afterTool
      ? { text: "Recorded it; the step is on file and nothing else is needed." }
      : { text: "Recording the step.", toolCalls: [{ name: "record_step", input: { n: 1 } }] };
  };
  const randomFault = (): FakeTurn | null => {
    if (random() >= faultShare) return null;
    const pick = random();
    if (pick < 1 / 3) return { status: 529 };
    if (pick < 2 / 3) return { status: 429, headers: { "retry-after": "1", "retry-after-ms": "1000" } };
    // Half the rest an error event in the middle of the stream (Anthropic's `event: error`, OpenAI's error chunk), half a cut connection.
    return pick < 5 / 6
      ? { text: "This answer fails in the middle of its stream.", errorAfterChunks: 3 }
      : { text: "This answer is cut off in the middle of its stream.", truncateAfterChunks: 3 };
  };
  try {
    const conversation = async () => {
      const res = await fetch(`${loopd.url}/conversations`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...PRIMARY, tools: ["record_step"], fallbacks: [FALLBACK] }),
      });
      if (res.status !== 201) throw new Error(`POST /conversations: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    };
    // Warm-up: connections opened and code paths compiled on both providers' paths.
    await Promise.all(Array.from({ length: 10 }, async () => chaosRun(loopd.url, await conversation())));
    const rows: ChaosRow[] = [];
    for (const phase of ["clean", "faults", "outage"] as const) {
      progress(`chaos: ${runs} runs, ${phase}`);
      const conversations = await Promise.all(Array.from({ length: runs }, conversation));
      counter.reset();
      faults = 0;
      let calls = 0;
      const started = performance.now();
      plan =
        phase === "clean"
          ? () => (calls++, null)
          : phase === "faults"
            ? () => (calls++, randomFault())
            : (req) => {
                calls++;
                const down = req.api === "openai" && performance.now() - started < outageMs;
                return down ? { status: 503, message: "The primary is down for this bench." } : null;
              };
      // Every phase starts its runs evenly over twice the outage, so the three see the same arrivals.
      const spacing = (2 * outageMs) / runs;
      const outcomes = await Promise.all(
        conversations.map(async (id, i) => {
          if (spacing > 0) await new Promise((resolve) => setTimeout(resolve, i * spacing));
          return chaosRun(loopd.url, id);
        }),
      );
      const latencies = outcomes
        .filter((o) => o.failure === null)
        .map((o) => o.ms)
        .sort((a, b) => a - b);
      const failures: Record<string, number> = {};
      for (const o of outcomes) if (o.failure !== null) failures[o.failure] = (failures[o.failure] ?? 0) + 1;
      rows.push({
        phase,
        runs,
        completed: latencies.length,
        failures,
        faults,
        calls,
        duplicateExecutions: counter.duplicates(),
        executions: counter.total(),
        textMismatches: outcomes.reduce((sum, o) => sum + o.textMismatches, 0),
        retries: outcomes.reduce((sum, o) => sum + o.retries, 0),
        fallbacks: outcomes.reduce((sum, o) => sum + o.fallbacks, 0),
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
      });
      plan = () => null;
    }
    return rows;
  } finally {
    await loopd.stop();
    await Promise.all([llm.close(), counter.close(), database.drop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One streaming run read to its end: its time, why it did not complete, and whether each step's streamed text adds up. */
async function chaosRun(
  url: string,
  conversationId: string,
): Promise<{ ms: number; failure: string | null; textMismatches: number; retries: number; fallbacks: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/conversations/${conversationId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: "Record a step, then say so.", stream: true }),
  });
  if (res.status !== 200) return { ms: 0, failure: String(res.status), textMismatches: 0, retries: 0, fallbacks: 0 };
  let streamed = "";
  let last = "none";
  let textMismatches = 0;
  let retries = 0;
  let fallbacks = 0;
  for await (const item of readSse(res)) {
    if (!isEvent(item)) continue;
    last = item.event;
    if (item.event === "text.delta") streamed += item.data.delta as string;
    else if (item.event === "step.restarted") streamed = "";
    else if (item.event === "model.retry") retries++;
    else if (item.event === "model.fallback") fallbacks++;
    else if (item.event === "message.created" && item.data.message.role === "assistant") {
      const saved = (item.data.message.content as Array<{ type: string; text?: string }>)
        .filter((b) => b.type === "text")
        .map((b) => b.text)
        .join("");
      if (saved !== streamed) textMismatches++;
      streamed = "";
    }
  }
  const failure = last === "run.completed" ? null : last;
  return { ms: performance.now() - started, failure, textMismatches, retries, fallbacks };
}

/** The HTTP tool's receiver: counts each execution by its tool_call_id, as a service with side effects would see them. */
async function startExecutionCounter(): Promise<{
  url: string;
  reset(): void;
  total(): number;
  duplicates(): number;
  close(): Promise<void>;
}> {
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const id = (JSON.parse(body) as { tool_call_id: string }).tool_call_id;
      seen.set(id, (seen.get(id) ?? 0) + 1);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ output: "recorded" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/record`,
    reset: () => seen.clear(),
    total: () => [...seen.values()].reduce((sum, n) => sum + n, 0),
    duplicates: () => [...seen.values()].filter((n) => n > 1).length,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
