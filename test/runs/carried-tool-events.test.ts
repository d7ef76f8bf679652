/**
 * A tool result saved with its call's `tool_call.started` and
 * `tool_call.completed` carries them in its own columns (issue 42: two rows
 * and their index entries less per tool step). What a reader is handed of
 * them must not change: the events read back from the database by another
 * instance are, id for id and byte for byte, those streamed live — for calls
 * run together, a failing call, an input whose keys jsonb reorders, and a
 * call that outlasts the wait for the next write (its start then a row of
 * its own, as before).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { describe, expect, test } from "vitest";
import { defineTool } from "../../src/tools/define-tool.js";
import { collectEvents } from "../support/helpers/sse-client.js";
import { testTools } from "../support/helpers/test-tools.js";
import { useTwoLoopds } from "../support/helpers/use-two-loopds.js";

/** Lets the `gate` tool finish. */
let open: () => void = () => {};

const tools = () => [
  ...testTools(),
  defineTool({
    name: "echo",
    description: "Says its input back.",
    input: z.object({ zeta: z.number(), alpha: z.object({ ключ: z.string(), b: z.array(z.unknown()) }) }),
    execute: (input) => input,
  }),
  defineTool({
    name: "gate",
    description: "Finishes when the test says so.",
    input: z.object({}),
    execute: () => new Promise<string>((resolve) => (open = () => resolve("opened"))),
  }),
];

const f = useTwoLoopds({ tools: tools() });

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe.each(["anthropic", "openai"] as const)("through %s", (provider) => {
  test("a tool step's start and end, carried by its result, read back from the database as they were streamed", async () => {
    const input = { zeta: 1.5, alpha: { ключ: "значение 🦊", b: [{ y: 2, x: 1 }, "\u00e9"] } };
    f.llm.script(
      // Two calls run together, one failing; then one that outlasts the wait for the next write; then the answer.
      {
        toolCalls: [
          { name: "echo", input },
          { name: "get_order", input: { id: "no-such-order" } },
        ],
      },
      { toolCalls: [{ name: "gate", input: {} }] },
      { text: "done" },
    );
    const conversation = (await (await post(`${f.loopd.url}/conversations`, { provider })).json()) as { id: string };
    const res = await post(`${f.loopd.url}/conversations/${conversation.id}/messages`, { content: "go", stream: true });
    const live = await collectEvents(res, (e) => {
      // The gate opens once its start has been streamed: written by then, on its own.
      if (e.event === "tool_call.started" && e.data.name === "gate") open();
    });
    expect(live.at(-1)!.event).toBe("run.completed");
    const runId = live[0]!.data.run.id as string;

    // Read by the other instance, which was handed nothing: all from the database.
    const stored = await collectEvents(
      await fetch(`${f.other.url}/conversations/${conversation.id}/runs/${runId}/events`, {
        headers: { "last-event-id": "0" },
      }),
    );
    expect(stored).toEqual(live);
    expect(stored.map((e) => e.id)).toEqual(stored.map((_, i) => i + 1));
    const started = stored.filter((e) => e.event === "tool_call.started");
    expect(started.map((e) => e.data.name)).toEqual(["echo", "get_order", "gate"]);
    expect(started[0]!.data.input).toEqual(input);
    const completed = stored.filter((e) => e.event === "tool_call.completed");
    expect(completed.map((e) => [e.data.name, e.data.is_error])).toEqual([
      ["echo", false],
      ["get_order", true],
      ["gate", false],
    ]);
    expect(completed.every((e) => Number.isInteger(e.data.duration_ms) && e.data.duration_ms >= 0)).toBe(true);

    // Rows: only the gate's start, which was written before its result existed.
    const rows = await f.database.db.execute(
      sql`select type, data->>'tool_call_id' as call from run_events where run_id = ${runId} and type like 'tool_call.%' order by seq`,
    );
    expect((rows as unknown as { rows: { type: string; call: string }[] }).rows).toEqual([
      { type: "tool_call.started", call: started[2]!.data.tool_call_id },
    ]);

    // A client that comes back after each event gets the rest, the same, from the database.
    for (const k of [started[0]!.id - 1, started[0]!.id, completed[1]!.id, started[2]!.id]) {
      const rest = await collectEvents(
        await fetch(`${f.other.url}/conversations/${conversation.id}/runs/${runId}/events`, {
          headers: { "last-event-id": String(k) },
        }),
      );
      expect(rest).toEqual(live.slice(k));
    }
  });
});
