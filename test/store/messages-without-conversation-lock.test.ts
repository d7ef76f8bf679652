/**
 * A run's step is saved without locking its conversation's row (issue 42:
 * the messages' foreign key took a key-share lock of it at every save, a WAL
 * record each), and a conversation's messages still go with it when it is
 * deleted (migration 0027's trigger, as the cascade did), a save racing the
 * delete included.
 */
import { sql } from "drizzle-orm";
import pg from "pg";
import { z } from "zod";
import { expect, test } from "vitest";
import { defineTool } from "../../src/tools/define-tool.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { usePostgresSession } from "../support/helpers/use-postgres-session.js";

/** Resolves when the `gate` tool runs; `open` lets it return. */
let entered: () => void = () => {};
let open: () => void = () => {};
const f = useLoopd({
  tools: [
    defineTool({
      name: "gate",
      description: "Changes something; finishes when the test says so.",
      input: z.object({}),
      execute: () =>
        new Promise<string>((resolve) => {
          open = () => resolve("done");
          entered();
        }),
    }),
  ],
});
const post = (path: string, body: unknown) =>
  f.loopd.app.inject({ method: "POST", url: path, payload: body as Record<string, unknown> });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const session = usePostgresSession(() => f.testDb.url);

/** A run stopped inside its `gate` call (its answer saved), and the conversation. */
async function runInGate(): Promise<{ conversationId: string; runId: string }> {
  const conversationId = (await post("/conversations", { provider: "anthropic" })).json().id as string;
  f.llm.script({ toolCalls: [{ name: "gate" }] }, { text: "Done." });
  const inGate = new Promise<void>((resolve) => (entered = resolve));
  const runId = (await post(`/conversations/${conversationId}/messages`, { content: "Go", wait: false })).json().run
    .id as string;
  await inGate;
  return { conversationId, runId };
}

const rowsOf = async (query: string, params: unknown[]) => (await session.db.query(query, params)).rows;

test.runIf(testDatabaseKind === "postgres")(
  "a step is saved while another transaction holds its conversation's row",
  async () => {
    const { conversationId, runId } = await runInGate();
    await session.db.query("begin");
    await session.db.query("select 1 from conversations where id = $1 for update", [conversationId]);
    try {
      open();
      // The call's result is saved (before: its key-share lock waited for this transaction's).
      for (
        let i = 0;
        (await rowsOf("select 1 from messages where run_id = $1 and role = 'tool'", [runId])).length === 0;
        i++
      ) {
        if (i > 200) throw new Error("the step's result was not saved while the conversation's row was held");
        await sleep(25);
      }
    } finally {
      await session.db.query("commit");
    }
    // The run's end, which does take the conversation's row, goes on once it is free.
    for (let i = 0; ; i++) {
      const run = (
        await f.loopd.app.inject({ method: "GET", url: `/conversations/${conversationId}/runs/${runId}` })
      ).json();
      if (run.status === "completed") break;
      if (i > 200) throw new Error(`the run did not end: ${run.status}`);
      await sleep(25);
    }
  },
);

test.runIf(testDatabaseKind === "postgres")(
  "a conversation deleted while a save holds its run's row: the save's messages go with it, none left behind",
  async () => {
    const conversationId = (await post("/conversations", { provider: "anthropic" })).json().id as string;
    f.llm.script({ text: "Hello." });
    const runId = (await post(`/conversations/${conversationId}/messages`, { content: "Hi" })).json().run.id as string;
    // A save in another session: the run's row held, a message written, not yet committed.
    await session.db.query("begin");
    await session.db.query("select 1 from runs where id = $1 for update", [runId]);
    await session.db.query(
      `insert into messages (id, conversation_id, seq, role, content, run_id)
         values ('msg_race', $1, (select max(seq) + 1 from messages where conversation_id = $1), 'user', '[]', $2)`,
      [conversationId, runId],
    );
    const deleter = new pg.Client({ connectionString: f.testDb.url });
    await deleter.connect();
    try {
      const pid = (await deleter.query("select pg_backend_pid() as pid")).rows[0].pid as number;
      const deleted = deleter.query("delete from conversations where id = $1", [conversationId]);
      for (let i = 0; ; i++) {
        if (
          (await rowsOf("select 1 from pg_stat_activity where pid = $1 and wait_event_type = 'Lock'", [pid])).length > 0
        )
          break;
        if (i > 400) throw new Error("the delete never waited for the save");
        await sleep(10);
      }
      await session.db.query("commit");
      expect((await deleted).rowCount).toBe(1);
    } finally {
      await deleter.end();
    }
    expect(await rowsOf("select id from messages where conversation_id = $1", [conversationId])).toEqual([]);
    expect(await rowsOf("select 1 from runs where conversation_id = $1", [conversationId])).toEqual([]);
  },
);

test("deleting a conversation deletes its messages, and only its own", async () => {
  const keep = (await post("/conversations", { provider: "anthropic" })).json().id as string;
  const gone = (await post("/conversations", { provider: "anthropic" })).json().id as string;
  f.llm.script({ text: "one" }, { text: "two" });
  expect((await post(`/conversations/${keep}/messages`, { content: "Hi" })).statusCode).toBe(200);
  expect((await post(`/conversations/${gone}/messages`, { content: "Hi" })).statusCode).toBe(200);
  expect((await f.loopd.app.inject({ method: "DELETE", url: `/conversations/${gone}` })).statusCode).toBeLessThan(300);
  const count = async (id: string) =>
    (
      (await f.database.db.execute(
        sql`select count(*)::int as n from messages where conversation_id = ${id}`,
      )) as unknown as { rows: { n: number }[] }
    ).rows[0]!.n;
  expect(await count(gone)).toBe(0);
  expect(await count(keep)).toBe(2);
});
