import { expect, test } from "vitest";
import type { ModelProvider, ModelRequestBody } from "../../src/core/model-provider.js";
import { replayRun } from "../../src/replay/replay-run.js";
import type { TraceEntry } from "../../src/runs/trace/read-trace.js";
import { createRedactor } from "../../src/util/redact.js";

/** A recorded attempt of `step`: answered with `text`, or failed. */
const attempt = (seq: number, step: number, text: string | null): TraceEntry => ({
  span: {
    seq,
    type: "model.call",
    at: "2026-01-01T00:00:00Z",
    step,
    outcome: text === null ? "failed" : "ok",
    ...(text !== null && { response: { content: [{ type: "text", text }], stop_reason: "end_turn" } }),
  },
  request: { model: `m-${seq}` } as unknown as ModelRequestBody,
});

async function* entries(list: TraceEntry[]) {
  yield* list;
}

test("failed attempts are sent again only when no later attempt answered their step", async () => {
  const sent: string[] = [];
  const provider = {
    generate: async (request: { model: string }) => {
      sent.push(request.model);
      return { content: [{ type: "text", text: "same" }], stopReason: "end_turn" };
    },
  } as unknown as ModelProvider;
  const report = await replayRun({
    entries: entries([
      attempt(1, 1, null), // retried, then answered
      attempt(2, 1, null),
      attempt(3, 1, "same"),
      attempt(4, 2, "same"),
      attempt(5, 3, null), // the step the run failed at: its last attempt is sent again
      attempt(6, 3, null),
    ]),
    providers: { anthropic: provider } as never,
    run: { id: "run_1", provider: "anthropic", model: "m" },
    redactor: createRedactor([]),
  });
  expect(sent).toEqual(["m-3", "m-4", "m-6"]);
  expect(report.steps.map((s) => [s.step, s.verdict])).toEqual([
    [1, "same_text"],
    [2, "same_text"],
    [3, "recorded_error"],
  ]);
});
