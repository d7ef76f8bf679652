/**
 * An answer whose calls are all read-only is saved with their results, one
 * write per tool step instead of two (issue 42: a statement, a transaction
 * and a row lock less per step). Running them again after a crash changes
 * nothing; a call with effects still runs only once the answer that made it
 * is durable. What a reader is handed does not change: the answer's
 * `message.created` comes before its calls' `tool_call.started`, live and
 * read back by another instance, and a read-only call that outlasts the
 * wait has its answer written while it runs.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { beforeEach, describe, expect, test, vi } from "vitest";
import { defineTool } from "../../src/tools/define-tool.js";
import { collectEvents, type SseEvent } from "../support/helpers/sse-client.js";
import { testTools } from "../support/helpers/test-tools.js";
import { useTwoLoopds } from "../support/helpers/use-two-loopds.js";

/** Lets the `slow_read` tool finish. */
let open: () => void = () => {};
/** What each tool saw of its own call in the database when it ran: whether the answer that made it was there. */
const sawItsCall = new Map<string, boolean>();
/**
 * How many `peek` calls look before any returns: a step's two peeks both
 * look before the first result exists (else the second may look after the
 * write that result makes, answer and all).
 */
let peeksLooking = 1;
let peeksLooked: Array<() => void> = [];
async function allPeeksLooked(): Promise<void> {
  const done = new Promise<void>((resolve) => peeksLooked.push(resolve));
  if (peeksLooked.length >= peeksLooking) for (const resolve of peeksLooked.splice(0)) resolve();
  await done;
}

/** Whether the conversation's saved history holds an assistant message making call `id`. */
async function callSaved(id: string): Promise<boolean> {
  const found = await f.database.db.execute(
    sql`select 1 from messages where role = 'assistant' and content @> ${JSON.stringify([{ type: "tool_call", id }])}::jsonb`,
  );
  return (found as unknown as { rows: unknown[] }).rows.length > 0;
}

const tools = () => [
  ...testTools(),
  defineTool({
    name: "peek",
    description: "Reads something; changes nothing.",
    input: z.object({}),
    readOnly: true,
    execute: async (_input, { toolCallId }) => {
      sawItsCall.set(`peek ${toolCallId}`, await callSaved(toolCallId));
      await allPeeksLooked();
      return "seen";
    },
  }),
  defineTool({
    name: "stamp",
    description: "Changes something.",
    input: z.object({}),
    execute: async (_input, { toolCallId }) => {
      sawItsCall.set(`stamp ${toolCallId}`, await callSaved(toolCallId));
      return "stamped";
    },
  }),
  defineTool({
    name: "slow_read",
    description: "Reads something, slowly; finishes when the test says so.",
    input: z.object({}),
    readOnly: true,
    execute: () => new Promise<string>((resolve) => (open = () => resolve("read"))),
  }),
];

const f = useTwoLoopds({ tools: tools() });
beforeEach(() => {
  sawItsCall.clear();
  peeksLooking = 1;
  peeksLooked = [];
});

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** The run's messages as saved, each with the time of the transaction that wrote it. */
async function savedMessages(runId: string): Promise<{ seq: number; role: string; created_at: string }[]> {
  const rows = await f.database.db.execute(
    sql`select seq, role, created_at::text as created_at from messages where run_id = ${runId} order by seq`,
  );
  return (rows as unknown as { rows: { seq: number; role: string; created_at: string }[] }).rows;
}

/** The live events, and the same run's events as another instance reads them from the database. */
async function streamedRun(content: string, onEvent?: (e: SseEvent) => void) {
  const conversation = (await (await post(`${f.loopd.url}/conversations`, { provider: "openai" })).json()) as {
    id: string;
  };
  const res = await post(`${f.loopd.url}/conversations/${conversation.id}/messages`, { content, stream: true });
  const live = await collectEvents(res, onEvent);
  expect(live.at(-1)!.event).toBe("run.completed");
  const runId = live[0]!.data.run.id as string;
  const stored = await collectEvents(
    await fetch(`${f.other.url}/conversations/${conversation.id}/runs/${runId}/events`, {
      headers: { "last-event-id": "0" },
    }),
  );
  return { runId, live, stored };
}

/** Where each event stands (text deltas left out): `message.created` by its message's role, the tool events by their tool's name. */
const outline = (events: SseEvent[]) =>
  events
    .filter((e) => e.event !== "text.delta")
    .map((e) =>
      e.event === "message.created"
        ? `message.created ${e.data.message.role}`
        : e.event.startsWith("tool_call.")
          ? `${e.event} ${e.data.name}`
          : e.event,
    );

describe("a step whose calls only read", () => {
  test("is one write less: its answer goes with their first result, and the calls ran before it", async () => {
    peeksLooking = 2;
    f.llm.script(
      {
        toolCalls: [
          { name: "peek", input: {} },
          { name: "peek", input: {} },
        ],
      },
      { text: "done" },
    );
    const { runId, live, stored } = await streamedRun("look twice");

    // The calls ran before their answer was written: it went with their results.
    expect([...sawItsCall.entries()].map(([k, saw]) => [k.split(" ")[0], saw])).toEqual([
      ["peek", false],
      ["peek", false],
    ]);
    const saved = await savedMessages(runId);
    expect(saved.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
    // One transaction: the answer and the first result carry its time (each result is saved the moment it exists).
    expect(saved[2]!.created_at).toBe(saved[1]!.created_at);
    expect(saved[4]!.created_at).not.toBe(saved[1]!.created_at);

    // A reader is handed what it always was: the answer announced before its calls start.
    expect(outline(live)).toEqual([
      "run.created",
      "message.created user",
      "message.created assistant",
      "tool_call.started peek",
      "tool_call.started peek",
      "message.created tool",
      "tool_call.completed peek",
      "message.created tool",
      "tool_call.completed peek",
      "message.created assistant",
      "run.completed",
    ]);
    expect(stored).toEqual(live);
    expect(stored.map((e) => e.id)).toEqual(stored.map((_, i) => i + 1));
  });

  test("a call with effects runs only once the answer that made it is durable, whatever else its step holds", async () => {
    f.llm.script(
      {
        toolCalls: [
          { name: "peek", input: {} },
          { name: "stamp", input: {} },
        ],
      },
      { text: "done" },
    );
    const { runId, live, stored } = await streamedRun("look, then change");

    const saw = Object.fromEntries([...sawItsCall.entries()].map(([k, v]) => [k.split(" ")[0], v]));
    expect(saw).toEqual({ peek: true, stamp: true });
    const saved = await savedMessages(runId);
    expect(saved.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
    // The answer was written on its own, before either call ran.
    expect(saved[2]!.created_at).not.toBe(saved[1]!.created_at);
    expect(stored).toEqual(live);
  });

  test("that outlasts the wait has its answer written while it runs, and a reader sees nothing else change", async () => {
    f.llm.script({ toolCalls: [{ name: "slow_read", input: {} }] }, { text: "done" });
    let callId = "";
    const { runId, live, stored } = await streamedRun("read slowly", (e) => {
      if (e.event !== "tool_call.started") return;
      callId = e.data.tool_call_id as string;
      // Streamed: its answer is durable by now (written with the start, within the wait); the call is still running.
      void callSaved(callId).then((saved) => {
        sawItsCall.set("slow_read", saved);
        open();
      });
    });
    await vi.waitFor(() => expect(sawItsCall.get("slow_read")).toBe(true));
    const saved = await savedMessages(runId);
    expect(saved.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(saved[2]!.created_at).not.toBe(saved[1]!.created_at);
    expect(outline(live).slice(2, 6)).toEqual([
      "message.created assistant",
      "tool_call.started slow_read",
      "message.created tool",
      "tool_call.completed slow_read",
    ]);
    expect(stored).toEqual(live);
  });
});
