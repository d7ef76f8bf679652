import { describe, expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { isEvent, readSse } from "../support/helpers/sse-client.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ listen: true });
const client = () => api(f.loopd.app);

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** GET /metrics, parsed: one sample per line that is not a comment. */
async function scrape(): Promise<Sample[]> {
  const res = await f.loopd.app.inject({ method: "GET", url: "/metrics" });
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.body
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [, name, labels = "", value] = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line)!;
      return {
        name: name!,
        labels: Object.fromEntries([...labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!])),
        value: Number(value),
      };
    });
}

/** The sum of the samples named so whose labels include `labels`; 0 when there is none. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** How much each metric moved between two scrapes. */
const delta =
  (before: Sample[], after: Sample[]) =>
  (name: string, labels: Record<string, string> = {}) =>
    valueOf(after, name, labels) - valueOf(before, name, labels);

const MODEL = "claude-sonnet-4-6";

describe("GET /metrics", () => {
  test("a run with a tool call moves the runs, model call, token, cost and tool counters, and leaves no run active", async () => {
    const before = await scrape();
    const conv = await client().createConversation({ provider: "anthropic", model: MODEL });
    f.llm.script(
      {
        toolCalls: [{ name: "calculate", input: { expression: "6*7" } }],
        usage: { input: 100, output: 20, cacheRead: 30, cacheWrite: 5 },
      },
      { text: "42.", usage: { input: 150, output: 10, cacheRead: 0, cacheWrite: 0 } },
    );
    const { run } = (await client().send(conv.id, { content: "6*7?" })).json();
    expect(run).toMatchObject({ status: "completed", steps: 2 });
    await f.loopd.runs.settled(run.id);
    const after = await scrape();
    const moved = delta(before, after);

    expect(valueOf(after, "loopd_runs_active")).toBe(0);
    expect(moved("loopd_runs_ended_total", { status: "completed", stop_reason: "end_turn" })).toBe(1);
    const model = { provider: "anthropic", model: MODEL };
    expect(moved("loopd_model_calls_total", { ...model, outcome: "tool_use" })).toBe(1);
    expect(moved("loopd_model_calls_total", { ...model, outcome: "end_turn" })).toBe(1);
    expect(moved("loopd_tokens_total", { ...model, type: "input" })).toBe(250);
    expect(moved("loopd_tokens_total", { ...model, type: "output" })).toBe(30);
    expect(moved("loopd_tokens_total", { ...model, type: "cache_read" })).toBe(30);
    expect(moved("loopd_tokens_total", { ...model, type: "cache_write" })).toBe(5);
    // $3 / $15 / $0.30 / $3.75 per million input / output / cache read / cache write tokens; the run says the same.
    expect(moved("loopd_cost_usd_total", model)).toBeCloseTo((250 * 3 + 30 * 15 + 30 * 0.3 + 5 * 3.75) / 1e6, 12);
    expect(moved("loopd_cost_usd_total", model)).toBeCloseTo(run.usage.cost_usd, 12);
    expect(moved("loopd_model_call_duration_seconds_count", { ...model, outcome: "ok" })).toBe(2);
    expect(moved("loopd_model_time_to_first_token_seconds_count", model)).toBe(2);
    expect(
      moved("loopd_tool_call_duration_seconds_count", { tool: "calculate", source: "builtin", outcome: "ok" }),
    ).toBe(1);
  });

  test("the gauges read the process as it is: a streamed run in flight is active and its stream open, then both are back to 0", async () => {
    const conv = await client().createConversation({ provider: "anthropic" });
    // The answer stalls after a few events, so the run stays in flight until it is cancelled.
    f.llm.script({ text: "one two three four five six", stallAfterChunks: 4 });
    const res = await fetch(`${f.loopd.url}/conversations/${conv.id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "Count.", stream: true }),
    });
    // Read by hand: leaving a for-await loop would close the stream.
    const events = readSse(res);
    let runId = "";
    for (;;) {
      const { value: item, done } = await events.next();
      if (done) throw new Error("the stream ended before any text");
      if (!isEvent(item)) continue;
      if (item.event === "run.created") runId = item.data.run.id;
      if (item.event === "text.delta") break;
    }
    const during = await scrape();
    expect(valueOf(during, "loopd_runs_active")).toBe(1);
    expect(valueOf(during, "loopd_sse_streams_open")).toBe(1);

    const cancelled = await f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/runs/${runId}/cancel`,
      payload: {},
    });
    expect(cancelled.json()).toMatchObject({ status: "cancelled" });
    await f.loopd.runs.settled(runId);
    let last = "";
    for await (const item of events) if (isEvent(item)) last = item.event;
    // The server gives the stream's place back as it ends it, before the client can see the end.
    expect(last).toBe("run.cancelled");
    const after = await scrape();
    expect(valueOf(after, "loopd_runs_active")).toBe(0);
    expect(valueOf(after, "loopd_sse_streams_open")).toBe(0);
    expect(
      valueOf(after, "loopd_runs_ended_total", { status: "cancelled", stop_reason: "cancelled" }),
    ).toBeGreaterThanOrEqual(1);
  });

  test("a run that pauses for approval counts as paused until it is cancelled, then as ended", async () => {
    const before = await scrape();
    const conv = await client().createConversation({ provider: "openai", approval_required: ["calculate"] });
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
    const { run } = (await client().send(conv.id, { content: "1+1?" })).json();
    expect(run.status).toBe("requires_action");
    await f.loopd.runs.settled(run.id);
    const paused = await scrape();
    expect(valueOf(paused, "loopd_runs_paused")).toBe(valueOf(before, "loopd_runs_paused") + 1);
    expect(delta(before, paused)("loopd_run_pauses_total")).toBe(1);
    expect(delta(before, paused)("loopd_runs_ended_total")).toBe(0);

    await f.loopd.app.inject({ method: "POST", url: `/conversations/${conv.id}/runs/${run.id}/cancel`, payload: {} });
    const after = await scrape();
    expect(valueOf(after, "loopd_runs_paused")).toBe(valueOf(before, "loopd_runs_paused"));
    expect(delta(paused, after)("loopd_runs_ended_total", { status: "cancelled", stop_reason: "cancelled" })).toBe(1);
  });

  test("a failed model call is counted as an error, and its run as failed", async () => {
    const before = await scrape();
    const conv = await client().createConversation({ provider: "openai", model: "gpt-4.1" });
    f.llm.script({ status: 400, message: "bad request" });
    const { run } = (await client().send(conv.id, { content: "hi" })).json();
    expect(run).toMatchObject({ status: "failed", stop_reason: "error" });
    await f.loopd.runs.settled(run.id);
    const moved = delta(before, await scrape());
    expect(moved("loopd_model_calls_total", { provider: "openai", model: "gpt-4.1", outcome: "error" })).toBe(1);
    expect(
      moved("loopd_model_call_duration_seconds_count", { provider: "openai", model: "gpt-4.1", outcome: "error" }),
    ).toBe(1);
    expect(moved("loopd_runs_ended_total", { status: "failed", stop_reason: "error" })).toBe(1);
  });

  test("a tool name the model made up is counted as _other, never as a label of its own", async () => {
    const conv = await client().createConversation({ provider: "anthropic" });
    f.llm.script({ toolCalls: [{ name: "made_up_tool_4711", input: {} }] }, { text: "Sorry." });
    const { run } = (await client().send(conv.id, { content: "Use it." })).json();
    await f.loopd.runs.settled(run.id);
    const samples = await scrape();
    expect(
      valueOf(samples, "loopd_tool_call_duration_seconds_count", {
        tool: "_other",
        source: "_other",
        outcome: "error",
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(samples.some((s) => Object.values(s.labels).includes("made_up_tool_4711"))).toBe(false);
    expect(samples.some((s) => Object.values(s.labels).some((v) => /^(run|conv|msg)_/.test(v)))).toBe(false);
  });

  test("process metrics, and the pool's use when on Postgres, are there; /metrics is documented as plain text", async () => {
    const samples = await scrape();
    expect(valueOf(samples, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(samples.some((s) => s.name === "nodejs_heap_size_used_bytes")).toBe(true);
    const total = samples.find((s) => s.name === "loopd_db_pool_connections" && s.labels.state === "total");
    if (f.database.kind === "postgres") expect(total?.value).toBeGreaterThanOrEqual(1);
    else expect(total).toBeUndefined();
    const doc = (await f.loopd.app.inject({ method: "GET", url: "/openapi.json" })).json();
    expect(Object.keys(doc.paths["/metrics"].get.responses["200"].content)).toEqual(["text/plain"]);
  });
});
