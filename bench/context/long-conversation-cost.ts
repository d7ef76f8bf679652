import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { SUMMARY_SYSTEM } from "../../src/agent/summary-prompt.js";
import type { RecordedRequest } from "../../test/support/fake-llm/server.js";
import { startFakeLlm } from "../../test/support/fake-llm/server.js";
import { toolResults } from "../../test/support/helpers/tool-heavy-conversation.js";
import { costOf, poster, type ContextCostRow } from "./context-cost.js";
import { startLoopdProcess } from "../lib/start-loopd-process.js";

/** A row of context's long conversation: its input tokens with the summary calls', and what the summaries cost apart. */
export interface LongConversationRow extends ContextCostRow {
  summaryCalls: number;
  /** The summary calls' own input tokens (already in the row's input figures). */
  summaryInput: number;
  /** Output tokens of all the runs, as loopd reports their usage (the summaries' included). */
  outputTokens: number;
}

/** The input limit of the `trim` and `summarize` rows. */
export const LONG_CONVERSATION_LIMIT = 8000;

const STRATEGIES = [
  { strategy: "full, no caching (the naive resend)", context: { strategy: "full" }, caching: false },
  { strategy: "full, caching", context: { strategy: "full" } },
  {
    strategy: `trim (keep 4, max ${LONG_CONVERSATION_LIMIT}), caching`,
    context: { strategy: "trim", max_input_tokens: LONG_CONVERSATION_LIMIT },
  },
  {
    strategy: `summarize (keep 4, max ${LONG_CONVERSATION_LIMIT}), caching`,
    context: { strategy: "summarize", max_input_tokens: LONG_CONVERSATION_LIMIT },
  },
] as const;

const isSummaryCall = (req: RecordedRequest) =>
  JSON.stringify(req.body.system ?? "").includes(SUMMARY_SYSTEM.slice(0, 60));

/**
 * context, second part: a 60-turn conversation, each turn a question, one
 * `read_file` of 1–4 KB and an answer of a few sentences, under each
 * strategy, on Anthropic's wire format. The summary calls are billed like
 * any other request (their input in the row), and their output is shown
 * apart: a summary is written, the others only read.
 */
export async function measureLongConversationCost({
  turns = 60,
  logLevel = "warn",
}: { turns?: number; logLevel?: string } = {}): Promise<LongConversationRow[]> {
  const llm = await startFakeLlm();
  const workspace = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-long-"));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "loopd-bench-long-data-"));
  const files = toolResults(turns, { seed: 60, maxChars: 4096 });
  files.forEach((r, i) => writeFileSync(path.join(workspace, `file_${i}.txt`), r.content));
  const loopd = await startLoopdProcess({
    env: {
      LLM_PROVIDER: "anthropic",
      ANTHROPIC_API_KEY: "bench",
      ANTHROPIC_BASE_URL: llm.url,
      WORKSPACE_DIR: workspace,
      DATA_DIR: dataDir,
      LOG_LEVEL: logLevel,
    },
  });
  llm.respond = (req) => {
    if (isSummaryCall(req))
      return {
        text: `Summary: the user asked about files ${[...new Set(JSON.stringify(req.body).match(/file_\d+/g) ?? [])].join(", ")}; each was read and answered. ${"Key values noted. ".repeat(40)}`,
      };
    const last = req.body.messages.at(-1);
    const turn = Number([...JSON.stringify(last).matchAll(/file_(\d+)/g)].at(-1)?.[1] ?? 0);
    const answered =
      Array.isArray(last.content) && last.content.some((b: { type?: string }) => b.type === "tool_result");
    return answered
      ? { text: `About file_${turn}: ${files[turn]!.content.replace(/\s+/g, " ").slice(0, 600)}` }
      : { toolCalls: [{ name: "read_file", input: { path: `file_${turn}.txt` } }] };
  };
  const post = poster(loopd.url);
  try {
    const rows: LongConversationRow[] = [];
    for (const { strategy, ...settings } of STRATEGIES) {
      llm.requests.length = 0;
      const conv = await post("/conversations", {
        system: "You are a code reviewer. Read the file you are pointed to, then say what it holds.",
        tools: ["read_file"],
        ...settings,
      });
      let outputTokens = 0;
      for (let turn = 0; turn < turns; turn++) {
        const { run } = await post(`/conversations/${conv.id}/messages`, { content: `What is in file_${turn}.txt?` });
        if (run.status !== "completed") throw new Error(`${strategy}: turn ${turn} ended ${run.status}`);
        outputTokens += run.usage.output_tokens;
      }
      const summaries = llm.requests.filter(isSummaryCall);
      rows.push({
        ...costOf(strategy, llm.requests),
        summaryCalls: summaries.length,
        summaryInput: summaries.reduce(
          (sum, r) => sum + r.counted!.input + r.counted!.cacheRead + r.counted!.cacheWrite,
          0,
        ),
        outputTokens,
      });
    }
    return rows;
  } finally {
    await loopd.stop();
    await llm.close();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}
