/**
 * A running run's steps and usage are written to its row's live columns, its
 * last (issue 42: the jsonb `usage` rewritten at every step logged ~270 bytes
 * of WAL, the columns between it and `steps` included), and read as its
 * `steps` and `usage` wherever a run's progress is read; the save that ends
 * it folds them into `steps` and `usage`.
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { expect, test } from "vitest";
import { z } from "zod";
import { runFromJson } from "../../src/store/run-columns.js";
import { webhookDeliveries } from "../../src/store/schema.js";
import { webhookBody } from "../../src/webhooks/webhook-body.js";
import { defineTool } from "../../src/tools/define-tool.js";
import { api } from "../support/helpers/api.js";
import { heldTool } from "../support/helpers/held-tool.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { newWebhookSecret } from "../support/helpers/webhook-receiver.js";

const hold = heldTool();
const note = defineTool({ name: "note", description: "Notes something.", input: z.object({}), execute: () => "noted" });
// Its webhooks go nowhere: the test reads what the outbox recorded.
const f = useLoopd({
  tools: [note, hold.tool],
  env: { WEBHOOK_SECRET: newWebhookSecret(), WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_MAX_ATTEMPTS: "1" },
});
const client = () => api(f.loopd.app);
const get = async (url: string) => (await f.loopd.app.inject({ method: "GET", url })).json();

interface Row {
  status: string;
  steps: number;
  usage: Record<string, number | null>;
  live_steps: number | null;
  live_input_tokens: string | number | null;
  live_cost_usd: string | null;
}
const rowsOf = async <T>(query: SQL) => ((await f.database.db.execute(query)) as unknown as { rows: T[] }).rows;
const rowOf = async (runId: string) =>
  (
    await rowsOf<Row>(
      sql`select status, steps, usage, live_steps, live_input_tokens, live_cost_usd from runs where id = ${runId}`,
    )
  )[0]!;

// $3 and $15 per million input and output tokens, cache reads $0.30, writes $3.75.
const step = { input: 1_000, output: 40, cacheRead: 2_000, cacheWrite: 100 };
const stepCost = (1_000 * 3 + 40 * 15 + 2_000 * 0.3 + 100 * 3.75) / 1e6;

/** Lets the held run go, and waits until it is `status` (its last model call made: the next test's script is its own). */
async function releaseToEnd(conversationId: string, runId: string, status: string) {
  hold.release();
  for (let i = 0; (await get(`/conversations/${conversationId}/runs/${runId}`)).status !== status; i++) {
    if (i > 400) throw new Error(`the run did not end ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A run held inside its second step's call: two steps answered, and the conversation. */
async function runHeldAtStepTwo(more: Record<string, unknown> = {}) {
  hold.reset();
  const conv = await client().createConversation({
    provider: "anthropic",
    model: "claude-sonnet-4-6",
    tools: ["note", "hold"],
    ...more,
  });
  f.llm.script(
    { toolCalls: [{ name: "note", input: {} }], usage: step },
    { toolCalls: [{ name: "hold", input: {} }], usage: step },
    { text: "Done.", usage: step },
  );
  const sent = await client().send(conv.id, { content: "Go", wait: false });
  expect(sent.statusCode, sent.body).toBe(202);
  await hold.entered();
  return { conversationId: conv.id as string, runId: sent.json().run.id as string };
}

test("a running run's progress is in its live columns, and reads as its steps and usage everywhere", async () => {
  const { conversationId, runId } = await runHeldAtStepTwo();
  // The second step's progress is saved with its answer, before its call runs (the call is not read-only).
  const row = await rowOf(runId);
  expect(row.status).toBe("running");
  expect(row.live_steps).toBe(2);
  expect(Number(row.live_input_tokens)).toBe(2_000);
  expect(Number(row.live_cost_usd)).toBeCloseTo(2 * stepCost, 9);
  // The columns a step's update no longer rewrites: as the run was created.
  expect(row.steps).toBe(0);
  expect(row.usage.input_tokens).toBe(0);

  const run = await get(`/conversations/${conversationId}/runs/${runId}`);
  expect(run.steps).toBe(2);
  expect(run.usage).toEqual({
    input_tokens: 2_000,
    output_tokens: 80,
    cache_read_tokens: 4_000,
    cache_write_tokens: 200,
    cost_usd: expect.closeTo(2 * stepCost, 9),
  });
  const listed = (await get(`/conversations/${conversationId}/runs`)).data[0];
  expect([listed.steps, listed.usage.input_tokens]).toEqual([2, 2_000]);
  expect((await get(`/conversations/${conversationId}`)).usage).toMatchObject({
    input_tokens: 2_000,
    output_tokens: 80,
  });
  const day = String(run.created_at).slice(0, 10);
  const usage = (await get(`/usage?from=${day}&to=${day}`)).data;
  expect(usage).toEqual([expect.objectContaining({ steps: 2, input_tokens: 2_000, cache_read_tokens: 4_000 })]);

  await releaseToEnd(conversationId, runId, "completed");
  const after = await rowOf(runId);
  expect([after.steps, after.usage.input_tokens, after.live_steps, after.live_input_tokens]).toEqual([
    3,
    3_000,
    null,
    null,
  ]);
  expect(after.usage.cost_usd).toBeCloseTo(3 * stepCost, 9);
});

test("a run stopped running by a write that left its live progress reads with it, its webhook's too", async () => {
  const { conversationId, runId } = await runHeldAtStepTwo({ webhook: { url: "http://127.0.0.1:9/hook" } });
  // As a writer other than the run's own save would (loopd has none today).
  await f.database.db.execute(
    sql`update runs set status = 'failed', stop_reason = 'error', completed_at = now() where id = ${runId}`,
  );
  const run = await get(`/conversations/${conversationId}/runs/${runId}`);
  expect([run.status, run.steps, run.usage.output_tokens, run.usage.cache_write_tokens]).toEqual([
    "failed",
    2,
    80,
    200,
  ]);
  expect(run.usage.cost_usd).toBeCloseTo(2 * stepCost, 9);
  // What its webhook POSTs: the run as the outbox took it when its status changed, live columns and all.
  const [delivery] = await f.database.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.runId, runId), eq(webhookDeliveries.type, "run.failed")));
  const posted = JSON.parse(webhookBody(delivery!)).data.run;
  expect([posted.status, posted.steps, posted.usage.input_tokens, posted.usage.cache_read_tokens]).toEqual([
    "failed",
    2,
    2_000,
    4_000,
  ]);
  hold.release();
});

test("a row read back from to_jsonb reads its live progress too", async () => {
  const { conversationId, runId } = await runHeldAtStepTwo();
  const [{ run }] = (await rowsOf<{ run: Record<string, unknown> }>(
    sql`select to_jsonb(r) as run from runs r where id = ${runId}`,
  )) as [{ run: Record<string, unknown> }];
  const read = runFromJson(run);
  expect([read.steps, read.usage.input_tokens, read.usage.cache_read_tokens]).toEqual([2, 2_000, 4_000]);
  expect(read.usage.cost_usd).toBeCloseTo(2 * stepCost, 9);
  expect(Object.keys(read).filter((k) => k.startsWith("live"))).toEqual([]);
  await releaseToEnd(conversationId, runId, "completed");
});

test("a pause folds the progress (an unpriced model's null cost kept), and the resumed run counts on from it", async () => {
  const conv = await client().createConversation({
    provider: "openai",
    model: "a-model-with-no-price",
    tools: ["note"],
    approval_required: ["note"],
  });
  f.llm.script({ toolCalls: [{ name: "note", input: {} }], usage: step }, { text: "Done.", usage: step });
  const paused = (await client().send(conv.id, { content: "Note it." })).json().run;
  expect(paused.status).toBe("requires_action");
  const row = await rowOf(paused.id);
  expect([row.steps, row.usage.input_tokens, row.usage.cost_usd, row.live_steps]).toEqual([1, 1_000, null, null]);

  const answered = await f.loopd.app.inject({
    method: "POST",
    url: `/conversations/${conv.id}/runs/${paused.id}/actions`,
    payload: { approvals: [{ tool_call_id: paused.required_action.tool_calls[0].tool_call_id, approve: true }] },
  });
  expect(answered.json().run).toMatchObject({ status: "completed", steps: 2 });
  expect(answered.json().run.usage).toMatchObject({ input_tokens: 2_000, output_tokens: 80, cost_usd: null });
  const after = await rowOf(paused.id);
  expect([after.steps, after.usage.input_tokens, after.usage.cost_usd, after.live_steps]).toEqual([
    2,
    2_000,
    null,
    null,
  ]);
});
