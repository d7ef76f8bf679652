import { describe, expect, test } from "vitest";
import { messageSpanData, spanOfMessage } from "../../../src/runs/trace/message-span.js";

const modelCall = (
  over: { raw_stop_reason?: string | null; body_sha256?: string | null; request?: Record<string, unknown> } = {},
) => ({
  type: "model.call",
  messageSeq: 8,
  data: {
    step: 3,
    started_at: "2026-12-01T14:09:36.123Z",
    latency_ms: 812,
    ttft_ms: 95,
    request: {
      history_length: 7,
      token_ratio: 1.05,
      tool_choice: "auto",
      body_sha256:
        "body_sha256" in over ? over.body_sha256 : "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      ...over.request,
    },
    response: {
      message_seq: 8,
      stop_reason: "tool_use",
      raw_stop_reason: "raw_stop_reason" in over ? over.raw_stop_reason : "tool_use",
      usage: { input_tokens: 1200, output_tokens: 40, cache_read_tokens: 1024, cache_write_tokens: 0 },
      model: "claude-sonnet-4-6",
      request_id: "req_1",
    },
  },
});

describe("a model call's span kept on its answer", () => {
  test.each([
    { case: "the raw stop reason is loopd's", span: modelCall() },
    { case: "the raw stop reason differs", span: modelCall({ raw_stop_reason: "tool_calls" }) },
    { case: "no raw stop reason, no body hash", span: modelCall({ raw_stop_reason: null, body_sha256: null }) },
    { case: "a setup and an output limit of its own", span: modelCall({ request: { setup: "abc", max_tokens: 100 } }) },
  ])("comes back whole: $case", ({ span }) => {
    const stored = messageSpanData(span);
    const back = spanOfMessage({ seq: 8, role: "assistant", content: [], span: JSON.parse(JSON.stringify(stored)) });
    expect(back).toEqual({ type: "model.call", data: span.data });
  });

  test("is stored as the JSON text of an array in its short form: no keys, no seqs, epoch milliseconds, base64url hash, usage as an array", () => {
    const stored = messageSpanData(modelCall({ raw_stop_reason: "tool_calls" }));
    expect(typeof stored).toBe("string");
    expect(JSON.parse(stored as string)).toEqual([
      3,
      Date.parse("2026-12-01T14:09:36.123Z"),
      812,
      95,
      1.05,
      "auto",
      expect.stringMatching(/^[\w-]{43}$/),
      "tool_use",
      [1200, 40, 1024, 0],
      "claude-sonnet-4-6",
      "req_1",
      "tool_calls",
    ]);
    // Less than half of the span whole, and of its object form (the keys the array leaves out).
    expect((stored as string).length).toBeLessThan(JSON.stringify(modelCall().data).length / 2);
  });

  test("stored as an array (rows written before its text form) comes back whole", () => {
    const span = modelCall({ raw_stop_reason: "tool_calls", request: { setup: "abc" } });
    const arrayForm = JSON.parse(messageSpanData(span) as string) as unknown[];
    expect(spanOfMessage({ seq: 8, role: "assistant", content: [], span: arrayForm })).toEqual({
      type: "model.call",
      data: span.data,
    });
  });

  test("stored in its object form (rows written before the array form) comes back whole", () => {
    const objectForm = {
      step: 3,
      started_at: Date.parse("2026-12-01T14:09:36.123Z"),
      latency_ms: 812,
      ttft_ms: 95,
      request: { token_ratio: 1.05, tool_choice: "auto", body_sha256: "n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg" },
      response: {
        stop_reason: "tool_use",
        usage: [1200, 40, 1024, 0],
        model: "claude-sonnet-4-6",
        request_id: "req_1",
        raw_stop_reason: "tool_calls",
      },
    };
    expect(spanOfMessage({ seq: 8, role: "assistant", content: [], span: objectForm })).toEqual({
      type: "model.call",
      data: modelCall({ raw_stop_reason: "tool_calls" }).data,
    });
  });
});

describe("a tool call's span kept on its result", () => {
  const result = { type: "tool_result", tool_call_id: "call_1", name: "read_file", content: "…", is_error: false };
  const span = (data: Record<string, unknown>) => ({
    type: "tool.call",
    messageSeq: 9,
    data: { tool_call_id: "call_1", name: "read_file", is_error: false, ...data, result_seq: 9 },
  });

  test.each([
    { case: "executed", data: { status: "ok", duration_ms: 5, source: "executed", tool_source: "builtin" } },
    {
      case: "from an MCP server",
      data: { status: "timeout", duration_ms: 30000, source: "executed", tool_source: "mcp", server: "files" },
    },
    { case: "written by loopd", data: { source: "loopd" } },
    { case: "a field the order does not name", data: { source: "client", later: { x: 1 } } },
  ])("comes back whole: $case", ({ data }) => {
    const stored = messageSpanData(span(data));
    expect(Array.isArray(JSON.parse(stored as string))).toBe(true);
    const back = spanOfMessage({
      seq: 9,
      role: "tool",
      content: [result as never],
      span: JSON.parse(JSON.stringify(stored)),
    });
    expect(back).toEqual({ type: "tool.call", data: span(data).data });
  });

  test("is stored as its values only, none past the last given", () => {
    expect(messageSpanData(span({ status: "ok", duration_ms: 5, source: "executed", tool_source: "builtin" }))).toBe(
      JSON.stringify(["executed", "ok", 5, "builtin"]),
    );
    expect(messageSpanData(span({ source: "loopd" }))).toBe(JSON.stringify(["loopd"]));
  });

  test("stored in its object form comes back whole", () => {
    const data = { status: "ok", duration_ms: 5, source: "executed", tool_source: "builtin" };
    expect(spanOfMessage({ seq: 9, role: "tool", content: [result as never], span: data })).toEqual({
      type: "tool.call",
      data: span(data).data,
    });
  });
});
