import { describe, expect, test } from "vitest";
import { z } from "zod";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { defineTool } from "../../src/tools/define-tool.js";
import type { RecordedRequest } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { toolResults } from "../support/helpers/tool-heavy-conversation.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const PAGES = toolResults(40, { seed: 21 });
const fetchPage = defineTool({
  name: "fetch_page",
  description: "Returns page n of the report (1–8 KB).",
  input: z.object({ n: z.number().int().min(0).max(39) }),
  readOnly: true,
  execute: ({ n }) => PAGES[n]!.content,
});

const f = useLoopd({ tools: [...createBuiltinTools(), fetchPage] });
const client = () => api(f.loopd.app);
const SYSTEM = "You are a careful analyst. Read the pages you need, then answer in one paragraph.";

/** The fake calls fetch_page until the request holds `pages` results, then answers. */
function pageReader(pages: number, answer = "Done.") {
  f.llm.respond = (req) => {
    const results = resultsIn(req);
    return results < pages ? { toolCalls: [{ name: "fetch_page", input: { n: results } }] } : { text: answer };
  };
}

function resultsIn(req: RecordedRequest): number {
  const messages: any[] = req.body.messages;
  if (req.api === "openai") return messages.filter((m) => m.role === "tool").length;
  return messages
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b: any) => b.type === "tool_result").length;
}

/** The request without its cache breakpoints: what the prompt cache compares. */
const withoutBreakpoints = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (key, v: unknown) => (key === "cache_control" ? undefined : v));

const messagesOf = (req: RecordedRequest) =>
  (withoutBreakpoints(req.body.messages) as unknown[]).map((m) => JSON.stringify(m));

/** Whether b's messages start with all of a's (Anthropic merges a new user message into the last user turn: a's last turn may grow). */
function extends_(a: RecordedRequest, b: RecordedRequest): boolean {
  const [ma, mb] = [messagesOf(a), messagesOf(b)];
  return ma.every((m, i) => m === mb[i]);
}

function breakpointsOf(body: any): string[] {
  const where: string[] = [];
  (body.tools ?? []).forEach((t: any, i: number) => t.cache_control && where.push(`tools.${i}`));
  if (Array.isArray(body.system))
    body.system.forEach((b: any, i: number) => b.cache_control && where.push(`system.${i}`));
  body.messages.forEach(
    (m: any, n: number) =>
      Array.isArray(m.content) &&
      m.content.forEach((b: any, i: number) => b.cache_control && where.push(`messages.${n}.${i}`)),
  );
  return where;
}

describe.each(["anthropic", "openai"] as const)("the context sent to %s", (provider) => {
  test("trim: old results go as stubs in batches; between clearings each request starts with the one before, byte for byte; calls stay paired", async () => {
    const conv = await client().createConversation({
      provider,
      system: SYSTEM,
      tools: ["fetch_page"],
      context: { strategy: "trim", keep_tool_results: 3 },
    });
    expect(conv.context).toEqual({ strategy: "trim", keep_tool_results: 3, max_input_tokens: null });
    pageReader(12);
    const body = (await client().send(conv.id, { content: "Summarise the report.", max_steps: 20 })).json();
    expect(body.run).toMatchObject({ status: "completed", steps: 13 });
    const requests = f.llm.requests;
    expect(requests).toHaveLength(13);
    // Every request was accepted by the fake, which refuses a call without its result (and the reverse), as the APIs do.
    expect(requests.every((r) => r.counted !== undefined)).toBe(true);
    const clearings = requests.slice(1).filter((r, k) => !extends_(requests[k]!, r)).length;
    // 12 results, 3 kept: cleared when the 6th, 9th and 12th arrive.
    expect(clearings).toBe(3);
    const last = JSON.stringify(requests.at(-1)!.body.messages);
    expect(
      last.match(
        /\[result of fetch_page cleared from the context to save space: [\d,]+ chars; call fetch_page again if you need it\]/g,
      ),
    ).toHaveLength(9);
    // The history keeps every result whole.
    const history = await client().history(conv.id);
    expect(history.filter((m) => m.role === "tool").map((m) => m.content[0].content)).toEqual(
      PAGES.slice(0, 12).map((p) => p.content),
    );
  });

  test("prompt caching is on by itself and its reads and writes are reported in usage", async () => {
    const conv = await client().createConversation({ provider, system: SYSTEM, tools: ["fetch_page"] });
    expect(conv.caching).toBe(true);
    pageReader(6);
    const body = (await client().send(conv.id, { content: "Read six pages." })).json();
    const requests = f.llm.requests;
    if (provider === "anthropic") {
      for (const r of requests) {
        const at = breakpointsOf(r.body);
        expect(at.length).toBeLessThanOrEqual(4);
        expect(at).toContain("tools.0");
        expect(at).toContain("system.0");
        const lastTurn = r.body.messages.length - 1;
        expect(at).toContain(`messages.${lastTurn}.${r.body.messages[lastTurn].content.length - 1}`);
      }
    } else {
      for (const r of requests) expect(r.body.prompt_cache_key).toBe(conv.id);
    }
    // From the third call on, the calls read what the ones before them cached.
    expect(requests.slice(2).every((r) => r.counted!.cacheRead > 0)).toBe(true);
    const sum = (key: "input" | "cacheRead" | "cacheWrite") => requests.reduce((s, r) => s + r.counted![key], 0);
    expect(body.run.usage).toMatchObject({
      input_tokens: sum("input"),
      cache_read_tokens: sum("cacheRead"),
      cache_write_tokens: sum("cacheWrite"),
    });
    if (provider === "anthropic") expect(sum("cacheWrite")).toBeGreaterThan(0);
    else expect(sum("cacheWrite")).toBe(0);
  });

  test('"caching": false sends no breakpoints and no cache key', async () => {
    const conv = await client().createConversation({ provider, system: SYSTEM, tools: ["fetch_page"], caching: false });
    expect(conv.caching).toBe(false);
    pageReader(3);
    await client().send(conv.id, { content: "Read three pages." });
    for (const r of f.llm.requests) {
      expect(JSON.stringify(r.body)).not.toContain("cache_control");
      expect(r.body.prompt_cache_key).toBeUndefined();
    }
    if (provider === "anthropic") expect(f.llm.requests.every((r) => r.counted!.cacheRead === 0)).toBe(true);
    // And back on with a PATCH.
    const patched = (
      await f.loopd.app.inject({ method: "PATCH", url: `/conversations/${conv.id}`, payload: { caching: true } })
    ).json();
    expect(patched.caching).toBe(true);
  });

  test("GET /conversations/:id/context is what the next call is sent", async () => {
    const conv = await client().createConversation({
      provider,
      system: SYSTEM,
      tools: ["fetch_page"],
      context: { strategy: "trim", keep_tool_results: 2 },
    });
    pageReader(7, "The report says little.");
    await client().send(conv.id, { content: "Read seven pages." });
    const res = await f.loopd.app.inject({
      method: "GET",
      url: `/conversations/${conv.id}/context?format=${provider}`,
    });
    expect(res.statusCode).toBe(200);
    const context = res.json();
    expect(context).toMatchObject({ format: provider, stubbed_tool_results: 4, left_out: { refused: 0, trimmed: 0 } });
    expect(context.estimated_input_tokens).toBeGreaterThan(0);

    f.llm.reset();
    f.llm.script({ text: "You are welcome." });
    await client().send(conv.id, { content: "Thanks." });
    const sent = f.llm.requests[0]!.body;
    const { messages: expectedMessages, ...expectedRest } = context.request;
    const { messages: sentMessages, ...sentRest } = sent;
    // The same request, with the new message at its end.
    const newMessage =
      provider === "anthropic"
        ? { role: "user", content: [{ type: "text", text: "Thanks." }] }
        : { role: "user", content: "Thanks." };
    expect(withoutBreakpoints(sentMessages)).toEqual([
      ...(withoutBreakpoints(expectedMessages) as unknown[]),
      newMessage,
    ]);
    expect(sentRest).toEqual(expectedRest);
    // The estimate was within 15% of what the provider counted for the request it described.
    const counted = f.llm.requests[0]!.counted!;
    const total = counted.input + counted.cacheRead + counted.cacheWrite;
    expect(Math.abs(context.estimated_input_tokens - total) / total).toBeLessThan(0.15);
  });

  test("max_input_tokens: old exchanges are left out whole, never the newest user message, and the requests stay near the limit", async () => {
    const conv = await client().createConversation({
      provider,
      system: SYSTEM,
      tools: ["fetch_page"],
      context: { strategy: "trim", keep_tool_results: 20, max_input_tokens: 6000 },
    });
    for (let q = 0; q < 6; q++) {
      let n = 0;
      f.llm.respond = () =>
        n++ < 3 ? { toolCalls: [{ name: "fetch_page", input: { n: q * 3 + n - 1 } }] } : { text: `Answer ${q}.` };
      const body = (await client().send(conv.id, { content: `Question ${q}?` })).json();
      expect(body.run.status).toBe("completed");
    }
    const requests = f.llm.requests;
    expect(requests).toHaveLength(24);
    for (const r of requests) {
      const counted = r.counted!;
      expect(counted.input + counted.cacheRead + counted.cacheWrite).toBeLessThan(6000 * 1.15);
    }
    const last = JSON.stringify(requests.at(-1)!.body.messages);
    expect(last).toContain("Question 5?");
    expect(last).not.toContain("Question 0?");
    expect(last).toMatch(/earlier messages of this conversation left out to fit the context window/);
    const context = (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/context` })).json();
    expect(context.left_out.trimmed).toBeGreaterThan(0);
  });
});

test("context settings are checked: a bad one is a 400 naming the field, and changes nothing", async () => {
  const conv = await client().createConversation({});
  expect(conv.context).toEqual({ strategy: "trim", keep_tool_results: 4, max_input_tokens: null });
  for (const context of [
    { strategy: "summarise" },
    { keep_tool_results: -1 },
    { max_input_tokens: 10 },
    { extra: 1 },
  ]) {
    const res = await f.loopd.app.inject({ method: "PATCH", url: `/conversations/${conv.id}`, payload: { context } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe("invalid_request");
    expect(JSON.stringify(res.json().error.details)).toContain("context");
  }
  const bad = await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/context?format=gemini` });
  expect(bad.statusCode).toBe(400);
  const missing = await f.loopd.app.inject({ method: "GET", url: "/conversations/conv_nope/context" });
  expect(missing.statusCode).toBe(404);
  expect((await client().createConversation({})).context.strategy).toBe("trim");
  const after = (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}` })).json();
  expect(after.context).toEqual(conv.context);
});

test("with the default settings, a 30-step tool-heavy conversation on Anthropic bills at most 20% of resending it all uncached, and its largest request is at most 40% of the naive largest (issue 22's token goal)", async () => {
  const billed = async (settings: Record<string, unknown>) => {
    const conv = await client().createConversation({
      provider: "anthropic",
      system: SYSTEM,
      tools: ["fetch_page"],
      ...settings,
    });
    f.llm.requests.length = 0;
    pageReader(30);
    const { run } = (
      await client().send(conv.id, { content: "Read pages 0 to 29, one at a time, then sum them up.", max_steps: 40 })
    ).json();
    expect(run).toMatchObject({ status: "completed", steps: 31 });
    let bill = 0;
    let largest = 0;
    for (const { counted } of f.llm.requests) {
      bill += counted!.input + 0.1 * counted!.cacheRead + 1.25 * counted!.cacheWrite;
      largest = Math.max(largest, counted!.input + counted!.cacheRead + counted!.cacheWrite);
    }
    return { bill, largest };
  };
  const naive = await billed({ caching: false, context: { strategy: "full" } });
  const defaults = await billed({});
  console.log(
    `defaults: ${((100 * defaults.bill) / naive.bill).toFixed(1)}% of the naive bill, largest request ${((100 * defaults.largest) / naive.largest).toFixed(1)}% of the naive largest`,
  );
  expect(defaults.bill / naive.bill).toBeLessThanOrEqual(0.2);
  expect(defaults.largest / naive.largest).toBeLessThanOrEqual(0.4);
}, 120_000);
