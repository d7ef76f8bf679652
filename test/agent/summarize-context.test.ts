import { describe, expect, test } from "vitest";
import { z } from "zod";
import { SUMMARY_SYSTEM } from "../../src/agent/summary-prompt.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { RecordedRequest } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { toolResults } from "../support/helpers/tool-heavy-conversation.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const PAGES = toolResults(60, { seed: 7, minChars: 1200, maxChars: 3000 });
const fetchPage = defineTool({
  name: "fetch_page",
  description: "Returns page n of the report.",
  input: z.object({ n: z.number().int().min(0).max(59) }),
  readOnly: true,
  execute: ({ n }) => PAGES[n]!.content,
});

const f = useLoopd({ tools: [...createBuiltinTools(), fetchPage] });
const client = () => api(f.loopd.app);
const SYSTEM = "You are a careful analyst. Read the page asked for, then answer in one sentence.";
const LIMIT = 6000;

/** Whether a request is a summary call: the system prompt says so. */
function isSummaryCall(req: RecordedRequest): boolean {
  const system = req.body.system;
  const text =
    typeof system === "string"
      ? system
      : Array.isArray(system)
        ? system.map((b: any) => b.text).join("")
        : req.body.messages[0]?.role === "system"
          ? req.body.messages[0].content
          : "";
  return typeof text === "string" && text === SUMMARY_SYSTEM;
}

/** A request without its cache breakpoints: what the prompt cache compares. */
const withoutBreakpoints = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (key, v: unknown) => (key === "cache_control" ? undefined : v));
const billedInput = (r: RecordedRequest) => r.counted!.input + r.counted!.cacheRead + r.counted!.cacheWrite;
const sentText = (r: RecordedRequest) => JSON.stringify(r.body.messages);

/** An answer of a few sentences (about 150 tokens), so that exchanges add up even with old results stubbed. */
const answerTo = (q: number) => `Answer ${q}. ${PAGES[q]!.content.replace(/\s+/g, " ").slice(0, 600)}`;

/** Each question: one fetch_page call, then a one-line answer; a summary call gets a summary naming what it was shown. */
function agent(summaries: { failWith?: number } = {}) {
  let summaryCalls = 0;
  f.llm.respond = (req) => {
    if (isSummaryCall(req)) {
      summaryCalls++;
      if (summaries.failWith) return { status: summaries.failWith, message: "summary model unavailable" };
      // What it was shown: the questions of the transcript, and those of the earlier summary it takes in.
      const text = sentText(req);
      const earlier = /asked questions ([\d, ]+);/.exec(text)?.[1]?.split(", ") ?? [];
      const questions = [...earlier, ...[...text.matchAll(/Question (\d+)\?/g)].map((m) => m[1]!)];
      return {
        text: `Summary ${summaryCalls}: the user asked questions ${[...new Set(questions)].join(", ")}; each was answered from a page of the report.`,
      };
    }
    const messages: any[] = req.body.messages;
    const last = messages.at(-1);
    const lastIsResult =
      req.api === "openai"
        ? last.role === "tool"
        : Array.isArray(last.content) && last.content.some((b: any) => b.type === "tool_result");
    const question = [...sentText(req).matchAll(/Question (\d+)\?/g)].at(-1)?.[1];
    return lastIsResult
      ? { text: answerTo(Number(question)) }
      : { toolCalls: [{ name: "fetch_page", input: { n: Number(question) } }] };
  };
}

describe.each(["anthropic", "openai"] as const)("summarize on %s", (provider) => {
  test("a 60-turn conversation keeps every request under max_input_tokens × 1.15, sends the summary in place of what it condenses, and counts the summary calls in the run", async () => {
    const conv = await client().createConversation({
      provider,
      system: SYSTEM,
      tools: ["fetch_page"],
      context: { strategy: "summarize", max_input_tokens: LIMIT },
    });
    expect(conv.context).toEqual({ strategy: "summarize", keep_tool_results: 4, max_input_tokens: LIMIT });
    agent();
    const runs: any[] = [];
    for (let q = 0; q < 60; q++) {
      const before = f.llm.requests.length;
      const { run } = (await client().send(conv.id, { content: `Question ${q}?` })).json();
      expect(run.status).toBe("completed");
      // The run's usage is what the fake billed for all its calls, the summary calls included.
      const mine = f.llm.requests.slice(before);
      expect(run.usage.input_tokens).toBe(mine.reduce((sum, r) => sum + r.counted!.input, 0));
      expect(run.steps).toBe(mine.filter((r) => !isSummaryCall(r)).length);
      runs.push(run);
    }
    const requests = f.llm.requests;
    // Every request was accepted by the fake, which rejects an orphan call or result as the APIs do.
    expect(requests.every((r) => r.counted !== undefined)).toBe(true);
    const summaryCalls = requests.filter(isSummaryCall);

    expect(summaryCalls.length).toBeGreaterThan(1);
    for (const r of requests) expect(billedInput(r)).toBeLessThan(LIMIT * 1.15);
    const last = sentText(requests.filter((r) => !isSummaryCall(r)).at(-1)!);
    expect(last).toContain("Question 59?");
    expect(last).not.toContain("Question 0?");
    expect(last).toMatch(/\[Summary of messages 1–\d+ of this conversation/);
    // The newest summary took in every one before it: it still knows the first question.
    expect(last).toContain(`Summary ${summaryCalls.length}: the user asked questions 0, 1, 2, 3`);
    // Between two summaries the requests start the same, so the prompt cache keeps hitting.
    const main = requests.filter((r) => !isSummaryCall(r));
    const firstOf = (r: RecordedRequest) =>
      JSON.stringify(withoutBreakpoints(r.body.messages.find((m: any) => m.role !== "system")));
    let changes = 0;
    for (let i = 1; i < main.length; i++) if (firstOf(main[i]!) !== firstOf(main[i - 1]!)) changes++;
    expect(changes).toBe(summaryCalls.length);
    const cached =
      main.reduce((sum, r) => sum + r.counted!.cacheRead, 0) / main.reduce((sum, r) => sum + billedInput(r), 0);
    expect(cached).toBeGreaterThan(0.5);
    // Summaries are never left out in favour of the cut: nothing was left out.
    expect(last).not.toMatch(/left out to fit the context window/);

    const history = await client().history(conv.id);
    const summaries = history.filter((m) => m.kind === "summary");
    expect(summaries).toHaveLength(summaryCalls.length);
    // Each covers the earlier one and more, from the start, and ends where an exchange starts.
    let covered = 0;
    for (const s of summaries) {
      expect(s.role).toBe("user");
      expect(s.summarizes.from_seq).toBe(1);
      expect(s.summarizes.to_seq).toBeGreaterThan(covered);
      expect(s.summarizes.to_seq).toBeLessThan(s.seq);
      covered = s.summarizes.to_seq;
      const next = history.find((m) => m.seq === s.summarizes.to_seq + 1)!;
      expect(next).toMatchObject({ role: "user" });
      expect(next.kind).toBeUndefined();
    }
    // The whole history is kept; the export in the provider's format leaves the summaries out.
    expect(history.filter((m) => m.role === "tool")).toHaveLength(60);
    const exported = (
      await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/messages?format=${provider}` })
    ).json();
    expect(JSON.stringify(exported.messages)).not.toContain("Summary 1:");

    // The trace of a run that summarised has the summary call's span, with its request and answer.
    const summarised = runs.find((r) => history.some((m) => m.kind === "summary" && m.run_id === r.id))!;
    const trace = (
      await f.loopd.app.inject({
        method: "GET",
        url: `/conversations/${conv.id}/runs/${summarised.id}/trace?expand=requests`,
      })
    ).json();
    const span = trace.spans.find((s: any) => s.type === "context.summary");
    expect(span).toMatchObject({ provider, summary_seq: expect.any(Number), error: null, summarizes: { from_seq: 1 } });
    expect(span.answer).toMatch(/^Summary \d+: /);
    expect(span.usage.output_tokens).toBeGreaterThan(0);
    expect(JSON.stringify(span.request)).toContain("Question 0?");
    // The calls after it are rebuilt exactly from the stored history, the summary included.
    const calls = trace.spans.filter((s: any) => s.type === "model.call");
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c: any) => c.request_verified === true)).toBe(true);
    expect(JSON.stringify(calls.at(-1).request.body)).toContain("[Summary of messages 1–");
  });

  test("a summary call that fails leaves the exchanges out instead, says so in the trace, and the run completes", async () => {
    const conv = await client().createConversation({
      provider,
      system: SYSTEM,
      tools: ["fetch_page"],
      context: { strategy: "summarize", max_input_tokens: LIMIT },
    });
    agent({ failWith: 400 });
    let failedRun: any = null;
    for (let q = 0; q < 14 && !failedRun; q++) {
      const { run } = (await client().send(conv.id, { content: `Question ${q}?` })).json();
      expect(run.status).toBe("completed");
      const trace = (
        await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${run.id}/trace` })
      ).json();
      if (trace.spans.some((s: any) => s.type === "context.summary")) failedRun = { run, trace };
    }
    expect(failedRun).not.toBeNull();
    const span = failedRun.trace.spans.find((s: any) => s.type === "context.summary");
    expect(span).toMatchObject({ summary_seq: null, answer: null });
    expect(span.error).toMatch(/the summary call failed .*the exchanges were left out instead/);
    const history = await client().history(conv.id);
    expect(history.some((m) => m.kind === "summary")).toBe(false);
    const last = sentText(f.llm.requests.filter((r) => !isSummaryCall(r)).at(-1)!);
    expect(last).toMatch(/earlier messages of this conversation left out to fit the context window/);
    for (const r of f.llm.requests.filter((x) => !isSummaryCall(x))) expect(billedInput(r)).toBeLessThan(LIMIT * 1.15);
  });
});

test("summarize needs max_input_tokens, and summary_model goes only with it: each a 400 naming the field", async () => {
  for (const [context, field] of [
    [{ strategy: "summarize" }, "max_input_tokens"],
    [{ strategy: "summarize", max_input_tokens: null }, "max_input_tokens"],
    [{ strategy: "trim", summary_model: "claude-haiku-4-5" }, "summary_model"],
    [{ strategy: "summarize", max_input_tokens: 8000, summary_model: "" }, "summary_model"],
  ] as const) {
    const res = await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { context } });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json().error.details)).toContain(field);
  }
  const ok = await client().createConversation({
    context: { strategy: "summarize", max_input_tokens: 8000, summary_model: "claude-haiku-4-5" },
  });
  expect(ok.context).toEqual({
    strategy: "summarize",
    keep_tool_results: 4,
    max_input_tokens: 8000,
    summary_model: "claude-haiku-4-5",
  });
});
