/**
 * A run taken over after its process stopped,
 * between a pause and its calls. Each test failed before its fix.
 */
import { eq } from "drizzle-orm";
import { expect, test } from "vitest";
import { z } from "zod";
import { answerAction } from "../../src/conversations/answer-action.js";
import { runs } from "../../src/store/schema.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { deleteNoteTool, effects } from "../support/helpers/action-tools.js";

/** A call that runs until it is let go (or its run is stopped). */
let release: (() => void) | null = null;
const slowLook = defineTool({
  name: "slow_look",
  description: "Looks, slowly.",
  input: z.object({}),
  execute: (_input, { signal }) =>
    new Promise<string>((resolve, reject) => {
      release = () => resolve("looked");
      signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true });
    }),
});

// A short lease, so that a run whose process "stopped" is taken over within the test; a short grace window.
const f = useLoopd({ tools: [deleteNoteTool(), slowLook], env: { RUN_LEASE_MS: "1200", RUN_GRACE_MS: "1000" } });
const client = () => api(f.loopd.app);
const getRun = async (conv: string, run: string) =>
  (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv}/runs/${run}` })).json();
async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
/** As if the run's process died: another owner that never renews, whose lease then runs out. */
async function abandon(runId: string) {
  await f.database.db
    .update(runs)
    .set({ leaseOwner: "a-dead-process", leaseExpiresAt: new Date(Date.now() + 1_500) })
    .where(eq(runs.id, runId));
}

test("a step whose process stopped before its pause was recorded: the call that needs approval is not answered 'it may have run', the run pauses for it", async () => {
  effects.length = 0;
  const conv = await client().createConversation({ provider: "anthropic", approval_required: ["delete_note"] });
  f.llm.script({
    toolCalls: [
      { name: "slow_look", input: {} },
      { name: "delete_note", input: { title: "t" } },
    ],
  });
  const sent = client().send(conv.id, { content: "Look, then delete t." });
  await until(
    async () => release,
    (r) => r !== null,
  );
  const runId = (await f.loopd.services.store.runs.list({ conversationId: conv.id, limit: 1 })).rows[0]!.id;
  await abandon(runId);
  const paused = await until(
    () => getRun(conv.id, runId),
    (r) => r.status !== "running",
  );
  await sent;
  release = null;
  expect(paused).toMatchObject({
    status: "requires_action",
    required_action: { tool_calls: [{ name: "delete_note", action: "approve" }] },
  });
  expect(effects).toEqual([]);
  const results = (await client().history(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0]);
  // The call cut off mid-way may or may not have taken effect; the one waiting for a person never ran, and has no result yet.
  expect(results).toEqual([
    expect.objectContaining({
      name: "slow_look",
      is_error: true,
      content: expect.stringContaining("may or may not have taken effect"),
    }),
  ]);
});

test("an approved call whose start was never recorded (the process stopped right after the answer) runs when the run is taken over", async () => {
  effects.length = 0;
  const conv = await client().createConversation({ provider: "openai", approval_required: ["delete_note"] });
  f.llm.script({ toolCalls: [{ name: "delete_note", input: { title: "draft" } }] });
  const paused = (await client().send(conv.id, { content: "Delete the draft." })).json().run;
  expect(paused.status).toBe("requires_action");
  // The answer commits; the process that took it stops before the call begins.
  await answerAction(
    { services: f.loopd.services, runs: { ...f.loopd.runs, start: () => {} } },
    {
      tenant: "default",
      conversationId: conv.id,
      runId: paused.id,
      approvals: [{ tool_call_id: paused.required_action.tool_calls[0].tool_call_id, approve: true }],
      toolOutputs: [],
    },
  );
  await abandon(paused.id);
  f.llm.script({ text: "Deleted." });
  const ended = await until(
    () => getRun(conv.id, paused.id),
    (r) => r.status !== "running",
  );
  expect(ended).toMatchObject({ status: "completed" });
  expect(effects).toEqual(["deleted draft"]);
  const results = (await client().history(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0]);
  expect(results).toEqual([
    expect.objectContaining({ name: "delete_note", is_error: false, content: "note draft deleted" }),
  ]);
});

test("a run whose own tool_choice is none, taken over after its time budget ran out: its one call is the grace call, bounded by RUN_GRACE_MS, and it ends budget/seconds", async () => {
  const conv = await client().createConversation({ provider: "openai" });
  // The first call is in flight when the process "stops"; after the take-over the model hangs too.
  f.llm.script({ hang: true }, { hang: true });
  const sent = client().send(conv.id, { content: "Answer.", tool_choice: "none", budget: { max_seconds: 30 } });
  await until(
    async () => f.llm.requests.length,
    (n) => n === 1,
  );
  const runId = (await f.loopd.services.store.runs.list({ conversationId: conv.id, limit: 1 })).rows[0]!.id;
  // Its clock ran out meanwhile: it began an hour ago.
  await f.database.db
    .update(runs)
    .set({ createdAt: new Date(Date.now() - 3_600_000) })
    .where(eq(runs.id, runId));
  await abandon(runId);
  const ended = await until(
    () => getRun(conv.id, runId),
    (r) => r.status !== "running",
  );
  await sent;
  expect(ended).toMatchObject({ status: "incomplete", stop_reason: "budget", budget_exceeded: "seconds" });
  // Taken for a grace call because of its tool_choice, the call had no deadline and hung on; at most one call after the take-over now.
  expect(f.llm.requests.length).toBeLessThanOrEqual(2);
});

test("an approved call that began before its process stopped is answered 'interrupted', never put up for approval again", async () => {
  const conv = await client().createConversation({ provider: "openai", approval_required: ["slow_look"] });
  f.llm.script({ toolCalls: [{ name: "slow_look", input: {} }] });
  const paused = (await client().send(conv.id, { content: "Look." })).json().run;
  expect(paused.status).toBe("requires_action");
  const callId = paused.required_action.tool_calls[0].tool_call_id;
  f.llm.script({ text: "It may have looked; check." });
  // Approved, the call begins (its start is saved before it runs) and is still going when its process stops.
  const answering = f.loopd.app.inject({
    method: "POST",
    url: `/conversations/${conv.id}/runs/${paused.id}/actions`,
    payload: { approvals: [{ tool_call_id: callId, approve: true }] },
  });
  await until(
    async () => release,
    (r) => r !== null,
  );
  await abandon(paused.id);
  const ended = await until(
    () => getRun(conv.id, paused.id),
    (r) => r.status !== "running",
  );
  release = null;
  await answering;
  // A second approval would have run it twice.
  expect(ended).toMatchObject({ status: "completed" });
  const results = (await client().history(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0]);
  expect(results).toEqual([
    expect.objectContaining({
      tool_call_id: callId,
      is_error: true,
      content: expect.stringContaining("may or may not have taken effect"),
    }),
  ]);
});
