import { once } from "node:events";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { api } from "../support/helpers/api.js";
import { captureLogs } from "../support/helpers/log-sink.js";
import { startLoopd } from "../support/helpers/start-loopd.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./otlp-receiver.js";

let receiver: OtlpReceiver;
// Registered before loopd's hooks: started before it, and (after-hooks run in reverse) closed after it.
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver?.close());
const f = useLoopd(() => ({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } }));
const client = () => api(f.loopd.app);

const SPAN_KIND_INTERNAL = 1;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;

/** Runs a message to its end, and sends the spans it made. */
async function runToEnd(conversationId: string, content: string) {
  const { run } = (await client().send(conversationId, { content })).json();
  await f.loopd.runs.settled(run.id);
  await f.loopd.services.telemetry.flush();
  const runSpan = receiver.spans.find((s) => s.attributes["loopd.run.id"] === run.id);
  if (!runSpan) throw new Error(`no invoke_agent span for ${run.id}`);
  const children = receiver.spans.filter((s) => s.parentSpanId === runSpan.spanId);
  return { run, runSpan, children };
}

const byStart = (a: ReceivedSpan, b: ReceivedSpan) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0);

describe("OpenTelemetry spans, with OTEL_EXPORTER_OTLP_ENDPOINT set", () => {
  test("a multi-step tool run is one invoke_agent span with a chat span per model call and an execute_tool span per tool call beneath it", async () => {
    const conv = await client().createConversation({
      provider: "anthropic",
      model: "claude-sonnet-4-6",
      system: "SYSTEM-PROMPT-SECRET",
    });
    f.llm.script(
      {
        toolCalls: [
          { name: "calculate", input: { expression: "6*7" } },
          { name: "get_current_time", input: { timezone: "Asia/Tokyo" } },
        ],
        usage: { input: 100, output: 20, cacheRead: 30, cacheWrite: 5 },
      },
      {
        toolCalls: [{ name: "calculate", input: { expression: "42+1" } }],
        usage: { input: 200, output: 15, cacheRead: 0, cacheWrite: 0 },
      },
      { text: "It is 43 o'clock in Tokyo.", usage: { input: 250, output: 12, cacheRead: 0, cacheWrite: 0 } },
    );
    const { run, runSpan, children } = await runToEnd(
      conv.id,
      "USER-TEXT-SECRET: 6*7, then +1, and the time in Tokyo?",
    );
    expect(run).toMatchObject({ status: "completed", steps: 3 });

    expect(runSpan).toMatchObject({ name: "invoke_agent", kind: SPAN_KIND_INTERNAL, parentSpanId: "" });
    expect(runSpan.resource["service.name"]).toBe("loopd");
    expect(runSpan.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-6",
      "gen_ai.conversation.id": conv.id,
      "loopd.run.status": "completed",
      "loopd.run.stop_reason": "end_turn",
      "gen_ai.usage.output_tokens": 47,
    });

    const chats = children.filter((s) => s.attributes["gen_ai.operation.name"] === "chat").sort(byStart);
    expect(chats).toHaveLength(3);
    for (const chat of chats) {
      expect(chat).toMatchObject({ name: "chat claude-sonnet-4-6", kind: SPAN_KIND_CLIENT, traceId: runSpan.traceId });
      expect(chat.attributes).toMatchObject({
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-6",
        "gen_ai.response.model": "claude-sonnet-4-6",
        "gen_ai.conversation.id": conv.id,
      });
      expect(chat.startNs).toBeGreaterThanOrEqual(runSpan.startNs);
      expect(chat.endNs).toBeLessThanOrEqual(runSpan.endNs);
    }
    expect(chats.map((c) => c.attributes["gen_ai.response.finish_reasons"])).toEqual([
      ["tool_use"],
      ["tool_use"],
      ["end_turn"],
    ]);
    // Input tokens count the cached ones too, as the conventions ask; the cache's share is told apart.
    expect(chats[0]!.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 135,
      "gen_ai.usage.output_tokens": 20,
      "gen_ai.usage.cache_read.input_tokens": 30,
      "gen_ai.usage.cache_creation.input_tokens": 5,
    });

    const tools = children.filter((s) => s.attributes["gen_ai.operation.name"] === "execute_tool").sort(byStart);
    expect(tools.map((t) => t.name).sort()).toEqual([
      "execute_tool calculate",
      "execute_tool calculate",
      "execute_tool get_current_time",
    ]);
    const history = await client().history(conv.id);
    const callIds = history.flatMap((m) => m.content.filter((b: any) => b.type === "tool_call").map((b: any) => b.id));
    expect(tools.map((t) => t.attributes["gen_ai.tool.call.id"]).sort()).toEqual([...callIds].sort());
    for (const tool of tools) {
      expect(tool).toMatchObject({ kind: SPAN_KIND_INTERNAL, traceId: runSpan.traceId });
      expect(tool.attributes).toMatchObject({
        "gen_ai.tool.type": "function",
        "loopd.tool.status": "ok",
        "loopd.tool.source": "builtin",
      });
      expect(tool.attributes["loopd.tool.server"]).toBeUndefined();
      expect(tool.statusCode).not.toBe(STATUS_ERROR);
    }
    // The second step's call ran between the second and the third model call.
    const last = tools.at(-1)!;
    expect(last.startNs).toBeGreaterThanOrEqual(chats[1]!.endNs);
    expect(last.endNs).toBeLessThanOrEqual(chats[2]!.startNs);
    expect(children).toHaveLength(6);

    // No content: not the system prompt, the user's text, a tool's input or output, the answer, nor a key.
    const sent = receiver.bodies.join("\n");
    for (const secret of [
      "SYSTEM-PROMPT-SECRET",
      "USER-TEXT-SECRET",
      "6*7",
      "Asia/Tokyo",
      "43 o'clock",
      "test-anthropic-key",
      "test-openai-key",
    ]) {
      expect(sent).not.toContain(secret);
    }
  });

  test("a failed model call is an error chat span, and its run an error invoke_agent span", async () => {
    const conv = await client().createConversation({ provider: "openai", model: "gpt-4.1" });
    f.llm.script({ status: 400, message: "bad request" });
    const { run, runSpan, children } = await runToEnd(conv.id, "hi");
    expect(run.status).toBe("failed");
    expect(runSpan).toMatchObject({
      statusCode: STATUS_ERROR,
      attributes: expect.objectContaining({ "error.type": "provider_error", "loopd.run.status": "failed" }),
    });
    expect(children).toEqual([
      expect.objectContaining({
        name: "chat gpt-4.1",
        statusCode: STATUS_ERROR,
        attributes: expect.objectContaining({ "gen_ai.provider.name": "openai", "error.type": "400" }),
      }),
    ]);
  });

  test("a tool that fails is an error execute_tool span", async () => {
    const conv = await client().createConversation({ provider: "openai" });
    f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: 12 } }] }, { text: "Sorry." });
    const { children } = await runToEnd(conv.id, "Compute.");
    const tool = children.find((s) => s.name === "execute_tool calculate");
    expect(tool).toMatchObject({
      statusCode: STATUS_ERROR,
      attributes: expect.objectContaining({ "loopd.tool.status": "error", "error.type": "tool_error" }),
    });
  });
});

test("a collector that cannot be reached costs a shutdown a bounded wait, never its success, and is logged once", async () => {
  // A port nothing listens on any more.
  const probe = createServer().listen(0, "127.0.0.1");
  await once(probe, "listening");
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  const { logger, lines } = captureLogs("warn");
  const other = await startLoopd({
    database: f.database,
    llm: f.llm,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
    logger,
  });
  try {
    const conv = await api(other.app).createConversation({ provider: "anthropic" });
    f.llm.script({ text: "Hi." });
    const { run } = (await api(other.app).send(conv.id, { content: "Hello" })).json();
    expect(run.status).toBe("completed");
    await other.runs.settled(run.id);
  } finally {
    const started = Date.now();
    await other.close(); // resolves: the spans are dropped, not the shutdown
    expect(Date.now() - started).toBeLessThan(10_000);
  }
  expect(lines.filter((l) => l.msg.startsWith("could not send spans"))).toHaveLength(1);
});

describe("the OTLP endpoint setting", () => {
  test("is off unless set; the general endpoint gets the traces path, the traces endpoint is taken whole", () => {
    expect(loadConfig({}).trace.otlpTracesUrl).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "" }).trace.otlpTracesUrl).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).trace.otlpTracesUrl).toBe(
      "http://collector:4318/v1/traces",
    );
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/ingest",
      }).trace.otlpTracesUrl,
    ).toBe("https://traces.example/ingest");
  });

  test("refuses what is not an http(s) URL, naming the variable", () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(ConfigError);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://collector:4317" })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
  });
});
