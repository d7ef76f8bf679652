import { z } from "zod";
import { expect, test } from "vitest";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { sseEventsOf } from "../support/helpers/sse-events.js";

// A check (passing on both databases): a live stream fed from published batches equals the replay, when
// toPgSafe mends a tool's result and the model's arguments (NUL, lone surrogates) and the run ends with a finish result.
const f = useLoopd({
  env: { RUN_LEASE_MS: "60000" },
  tools: [
    ...createBuiltinTools(),
    defineTool({
      name: "dirty",
      description: "Returns bytes Postgres refuses.",
      input: z.object({ s: z.string() }),
      execute: ({ s }) => `out\u0000put \ud800 lone ${s} \udc00`,
    }),
  ],
});

const eventsOf = sseEventsOf;

test("mended tool input and result, several deltas, a finish result: the live stream is the replay, event for event", async () => {
  f.llm.script(
    { text: "a b c d e f g h", chunkDelayMs: 15, toolCalls: [{ name: "dirty", input: { s: "in\u0000put \ud83d" } }] },
    {
      toolCalls: [
        {
          name: "finish",
          input: { summary: "s\u0000um \udfff", result: { answer: "x\u0000y", n: 1e21, z: -0, small: 1e-7 } },
        },
      ],
    },
  );
  const conv = (
    await f.loopd.app.inject({
      method: "POST",
      url: "/conversations",
      payload: { provider: "openai", tools: ["dirty"] },
    })
  ).json();
  const res = await f.loopd.app.inject({
    method: "POST",
    url: `/conversations/${conv.id}/messages`,
    payload: { content: "go", stream: true, finish: { result_schema: { type: "object" } } },
  });
  const live = eventsOf(res.body);
  if (live.length === 0) console.log(res.statusCode, res.body.slice(0, 500));
  expect(live.at(-1)?.event).toBe("run.completed");
  expect((live.at(-1)!.data as { run: { result: unknown } }).run.result).toBeTruthy();
  const runId = (live[0]!.data as { run: { id: string } }).run.id;
  const replay = eventsOf(
    (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${runId}/events` })).body,
  );
  expect(replay.map(({ id, event, data }) => ({ id, event, data }))).toEqual(
    live.map(({ id, event, data }) => ({ id, event, data })),
  );
  expect(live.map((e) => e.id)).toEqual(live.map((_, i) => i + 1));
  // Bytes: the same JSON, keys in another order (the writer's order live, jsonb's in a replay).
  const differ = live.filter((e, i) => e.raw !== replay[i]!.raw).map((e) => e.event);
  console.log("events whose data bytes differ between live and replay:", differ);
});
