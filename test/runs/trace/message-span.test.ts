import { describe, expect, test } from "vitest";
import { messageSpanData, spanOfMessage } from "../../../src/runs/trace/message-span.js";

const modelCall = (over: { raw_stop_reason?: string | null; body_sha256?: string | null } = {}) => ({
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
  ])("comes back whole: $case", ({ span }) => {
    const stored = messageSpanData(span);
    const back = spanOfMessage({ seq: 8, role: "assistant", content: [], span: JSON.parse(JSON.stringify(stored)) });
    expect(back).toEqual({ type: "model.call", data: span.data });
  });

  test("is stored in its short form: no seqs, epoch milliseconds, base64url hash, usage as an array", () => {
    const stored = messageSpanData(modelCall()) as any;
    expect(stored.started_at).toBe(Date.parse("2026-12-01T14:09:36.123Z"));
    expect(stored.request.body_sha256).toHaveLength(43);
    expect(stored.request.history_length).toBeUndefined();
    expect(stored.response).toEqual({
      stop_reason: "tool_use",
      usage: [1200, 40, 1024, 0],
      model: "claude-sonnet-4-6",
      request_id: "req_1",
    });
    expect(JSON.stringify(stored).length).toBeLessThan(JSON.stringify(modelCall().data).length - 120);
  });
});
