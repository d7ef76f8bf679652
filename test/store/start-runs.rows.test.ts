import { sql, type SQL } from "drizzle-orm";
import { expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";

// Checks (passing) of the fast path's rows against drizzle's and against the general path's.
const f = useLoopd();

const post = (url: string, payload?: object, headers?: Record<string, string>) =>
  f.loopd.app.inject({ method: "POST", url, ...(payload && { payload }), ...(headers && { headers }) });
const rowsOf = async (query: SQL) =>
  ((await f.database.db.execute(query)) as unknown as { rows: Record<string, unknown>[] }).rows;

test(`runs.start (${testDatabaseKind}): the run it returns (runFromJson of to_jsonb) is exactly the row drizzle reads back: Dates, jsonb, nulls, booleans, integers`, async () => {
  const conv = (await post("/conversations", { provider: "openai" })).json();
  const store = f.loopd.services.store;
  const started = await store.runs.start({
    run: {
      id: "run_review19a",
      conversationId: conv.id,
      provider: "openai",
      model: "gpt-4o-mini",
      usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 },
      request: {
        max_steps: 3,
        tool_choice: { name: "x" },
        model: null,
        budget: { max_steps: 3, max_tokens: null, max_seconds: 1.5, max_cost_usd: 0.1, grace_turn: false },
        finish: null,
      },
      idempotencyKey: "k-1",
      requestHash: "h",
      leaseOwner: "someone",
    },
    leaseMs: 12_345,
    tenant: "default",
    cap: 5,
    messageId: "msg_review19a",
    content: [{ type: "text", text: "hi" }],
  });
  expect(started && "run" in started).toBe(true);
  expect((started as { run: unknown }).run).toStrictEqual(await store.runs.get("run_review19a"));
  const [lease] = await rowsOf(
    sql`select (extract(epoch from lease_expires_at - created_at) * 1000)::int as ms from runs where id = 'run_review19a'`,
  );
  expect(Math.abs(Number(lease!.ms) - 12_345)).toBeLessThanOrEqual(1);
});

test(`the fast path and the general path (a history that ends with a user message) write the same creation rows (${testDatabaseKind})`, async () => {
  // A run that fails at the model: its conversation's history ends with the user message, so the next run takes the general path.
  f.llm.script({ status: 400, message: "bad" }, { text: "two" }, { text: "one" });
  const general = (await post("/conversations", { provider: "openai" })).json();
  await post(`/conversations/${general.id}/messages`, { content: "first" });
  const generalRun = (
    await post(`/conversations/${general.id}/messages`, { content: "second" }, { "idempotency-key": "g" })
  ).json().run;
  const fast = (await post("/conversations", { provider: "openai" })).json();
  const fastRun = (
    await post(`/conversations/${fast.id}/messages`, { content: "second" }, { "idempotency-key": "g" })
  ).json().run;
  const list = await rowsOf(sql`
    select r.id, r.status, r.steps, r.first_seq, r.idempotency_key, r.request, r.request_hash, r.cancel_requested, r.paused_ms,
      (select json_agg(json_build_object('seq', e.seq, 'type', e.type, 'data', e.data) order by e.seq) from run_events e where e.run_id = r.id and e.seq <= 2) as events,
      (select json_agg(json_build_object('seq', m.seq, 'event_seq', m.event_seq, 'role', m.role, 'kind', m.kind, 'span', m.span is null, 'excluded', m.excluded, 'content', m.content) order by m.seq)
        from messages m where m.run_id = r.id and m.role = 'user') as messages
    from runs r where r.id in (${generalRun.id}, ${fastRun.id})`);
  const of = (id: string) => {
    const { id: _, first_seq, ...rest } = list.find((r) => r.id === id)!;
    return {
      ...rest,
      messages: (rest.messages as { seq: number }[]).map((m) => ({ ...m, seq: m.seq - (first_seq as number) })),
    };
  };
  expect(of(fastRun.id)).toEqual(of(generalRun.id));
  // Replaying the key answers the same run, from either path.
  expect(
    (await post(`/conversations/${fast.id}/messages`, { content: "second" }, { "idempotency-key": "g" })).json().run.id,
  ).toBe(fastRun.id);
});
