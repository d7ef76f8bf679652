import { describe, expect, test } from "vitest";
import { traceSpans, type TraceSpan } from "../../../src/runs/trace/read-trace.js";
import type { TraceRow } from "../../../src/store/trace-repository.js";
import { createRedactor } from "../../../src/util/redact.js";

const at = new Date("2026-01-01T00:00:00Z");
const run = { id: "run_1", conversationId: "conv_1", firstSeq: 1 };
const setup = (hash: string, provider: string, model: string) => ({
  hash,
  provider,
  model,
  system: null,
  tools: [],
  context: {},
  fixed_tokens: 0,
  max_tokens: 1024,
  cache_key: null,
});
const request = (setupHash?: string) => ({
  history_length: 1,
  token_ratio: 1,
  tool_choice: "auto",
  ...(setupHash && { setup: setupHash }),
  body_sha256: null,
});

async function read(entries: TraceRow[]): Promise<TraceSpan[]> {
  const store = { traces: { page: async () => entries } } as never;
  const spans: TraceSpan[] = [];
  for await (const span of traceSpans({ store, run, redactor: createRedactor([]) })) spans.push(span);
  return spans;
}

/** A failed attempt's stored data (an older trace's `model.failed` span has no `outcome`). */
const attemptData = (setupHash: string | undefined, error: string, status: number | null, { legacy = false } = {}) => ({
  step: 1,
  started_at: at.toISOString(),
  latency_ms: 5,
  ...(!legacy && { outcome: "failed" }),
  request: request(setupHash),
  error,
  status,
});

const row = (seq: number, type: string, data: Record<string, unknown>): TraceRow =>
  ({ row: { seq, runId: run.id, step: 1, type, data, createdAt: at } }) as unknown as TraceRow;

describe("traceSpans", () => {
  test("a failed attempt is a model.call with outcome failed, naming its setup's provider and model", async () => {
    const spans = await read([
      row(1, "model.setup", setup("h1", "anthropic", "claude-a")),
      row(2, "model.call", attemptData("h1", "Overloaded", 529)),
      row(3, "model.setup", setup("h2", "openai", "gpt-b")),
      row(4, "model.call", attemptData("h2", "socket hang up", null)),
      row(5, "model.call", attemptData(undefined, "again", 503)),
    ]);
    expect(spans.filter((s) => s.type === "model.call")).toEqual([
      expect.objectContaining({ outcome: "failed", provider: "anthropic", model: "claude-a", status: 529 }),
      expect.objectContaining({ outcome: "failed", provider: "openai", model: "gpt-b", status: null }),
      // Its setup unchanged since the previous call: stored without it, put back.
      expect.objectContaining({ outcome: "failed", provider: "openai", model: "gpt-b", request: request("h2") }),
    ]);
  });

  test("a trace stored before keeps failed attempts as model.failed spans: they are read as failed model.calls", async () => {
    const spans = await read([
      row(1, "model.setup", setup("h1", "anthropic", "claude-a")),
      row(2, "model.failed", attemptData("h1", "bad request", 400, { legacy: true })),
    ]);
    expect(spans[1]).toMatchObject({
      seq: 2,
      type: "model.call",
      outcome: "failed",
      provider: "anthropic",
      model: "claude-a",
      error: "bad request",
      status: 400,
    });
    expect(spans[1]).not.toHaveProperty("response");
  });
});
