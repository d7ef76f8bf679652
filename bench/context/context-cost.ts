import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RecordedRequest } from "../../test/support/fake-llm/server.js";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { toolResults } from "../../test/support/helpers/tool-heavy-conversation.js";
import { startLoopdProcess } from "../lib/start-loopd-process.js";

export interface ContextCostRow {
  strategy: string;
  requests: number;
  /** Tokens as billed, input price = 1: input + 0.1 × cache reads + 1.25 × cache writes. */
  billedEquivalent: number;
  /** All input tokens of all requests, cached or not. */
  inputTokens: number;
  cacheRead: number;
  cacheWrite: number;
  /** The largest single request, in input tokens. */
  largest: number;
}

/** Anthropic's prices relative to input: a cache read is 0.1×, a cache write (5 minutes) 1.25×. */
const CACHE_READ = 0.1;
const CACHE_WRITE = 1.25;

const STRATEGIES = [
  { strategy: "full, no caching (the naive resend)", conversation: { caching: false, context: { strategy: "full" } } },
  { strategy: "full, caching", conversation: { context: { strategy: "full" } } },
  ...[6, 5, 4, 3].map((keep) => ({
    strategy: `trim (keep ${keep}), caching`,
    conversation: { context: { strategy: "trim", keep_tool_results: keep } },
  })),
  { strategy: "the defaults (nothing set)", conversation: {} },
] as const;

/**
 * context: What a 30-step tool-heavy conversation costs in input tokens under
 * each context strategy: one loopd process on Anthropic's wire format (the
 * fake LLM), a model that reads 30 files of 1–8 KB one at a time, then
 * answers. The fake bills each request as Anthropic documents prompt
 * caching (prefix up to a breakpoint, byte-identical to one an earlier
 * request cached, at least 1,024 tokens; tokens counted with o200k), from
 * the requests exactly as loopd sent them.
 */
export async function measureContextCost({
  steps = 30,
  logLevel = "warn",
}: { steps?: number; logLevel?: string } = {}): Promise<ContextCostRow[]> {
  const llm = await startFakeLlm();
  const workspace = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-context-"));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-context-data-"));
  toolResults(steps, { seed: 30 }).forEach((r, i) => writeFileSync(path.join(workspace, `file_${i}.txt`), r.content));
  const loopd = await startLoopdProcess({
    env: {
      LLM_PROVIDER: "anthropic",
      ANTHROPIC_API_KEY: "bench",
      ANTHROPIC_BASE_URL: llm.url,
      WORKSPACE_DIR: workspace,
      DATA_DIR: dataDir,
      LOG_LEVEL: logLevel,
      MAX_STEPS_LIMIT: String(steps + 10),
    },
  });
  llm.respond = (req) => {
    const read = resultsIn(req);
    return read < steps
      ? { toolCalls: [{ name: "read_file", input: { path: `file_${read}.txt` } }] }
      : { text: "All files read; here is the summary." };
  };
  const post = poster(loopd.url);
  try {
    const rows: ContextCostRow[] = [];
    for (const { strategy, conversation } of STRATEGIES) {
      llm.requests.length = 0;
      const conv = await post("/conversations", {
        system: "You are a code reviewer. Read every file you are pointed to, then summarise what you found.",
        tools: ["read_file", "list_files", "search_files"],
        ...conversation,
      });
      const { run } = await post(`/conversations/${conv.id}/messages`, {
        content: `Read file_0.txt to file_${steps - 1}.txt, one at a time, then summarise.`,
        max_steps: steps + 5,
      });
      if (run.status !== "completed" || run.steps !== steps + 1)
        throw new Error(`${strategy}: the run ended ${run.status} after ${run.steps} steps`);
      rows.push(costOf(strategy, llm.requests));
    }
    return rows;
  } finally {
    await loopd.stop();
    await llm.close();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** POSTs JSON to a loopd process; its answer's JSON, or an error saying what it answered. */
export const poster =
  (url: string) =>
  async (route: string, body: unknown): Promise<any> => {
    const res = await fetch(`${url}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`POST ${route}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };

/** What a strategy's requests were billed, from the fake's counts. */
export function costOf(strategy: string, requests: RecordedRequest[]): ContextCostRow {
  const row: ContextCostRow = {
    strategy,
    requests: requests.length,
    billedEquivalent: 0,
    inputTokens: 0,
    cacheRead: 0,
    cacheWrite: 0,
    largest: 0,
  };
  for (const { counted } of requests) {
    if (!counted) throw new Error(`${strategy}: a request was refused by the fake`);
    const total = counted.input + counted.cacheRead + counted.cacheWrite;
    row.inputTokens += total;
    row.cacheRead += counted.cacheRead;
    row.cacheWrite += counted.cacheWrite;
    row.billedEquivalent += counted.input + CACHE_READ * counted.cacheRead + CACHE_WRITE * counted.cacheWrite;
    row.largest = Math.max(row.largest, total);
  }
  return row;
}

function resultsIn(req: RecordedRequest): number {
  const messages = req.body.messages as { content: unknown }[];
  return messages
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: { type?: string }) => b.type === "tool_result").length;
}
