/**
 * Postgres only (found by review): a `store: false` response's conversation
 * is made marked for deletion, in the statement that makes it. Before, the
 * mark was a statement of its own after it: a process killed between the two
 * left an unmarked conversation that nothing would ever delete. The gap is
 * made wide here by a trigger that holds the first mark of a conversation;
 * a conversation seen without its mark is what a kill there would leave.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { usePostgresSession } from "../support/helpers/use-postgres-session.js";

const f = useLoopd();
const session = usePostgresSession(() => f.testDb.url);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  if (testDatabaseKind !== "postgres") return;
  await session.db.query(`create function test_slow_mark() returns trigger language plpgsql as $$
    begin perform pg_sleep(1.5); return new; end $$`);
  await session.db.query(`create trigger test_slow_mark before update of discard_at on conversations for each row
    when (old.discard_at is null and new.discard_at is not null) execute function test_slow_mark()`);
});
afterAll(async () => {
  if (testDatabaseKind !== "postgres") return;
  await session.db.query("drop trigger if exists test_slow_mark on conversations");
});

test.runIf(testDatabaseKind === "postgres")(
  "a store: false response's conversation exists only marked: new, forked from a conversation, continued from a response",
  async () => {
    /** Each conversation the moment it is first seen: was it marked? */
    const seen = new Map<string, boolean>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const { rows } = await session.db.query<{ id: string; marked: boolean }>(
          "select id, discard_at is not null as marked from conversations",
        );
        for (const { id, marked } of rows) if (!seen.has(id)) seen.set(id, marked);
        await sleep(5);
      }
    })();
    const create = async (body: Record<string, unknown>) => {
      const res = await f.loopd.app.inject({
        method: "POST",
        url: "/v1/responses",
        payload: { model: "openai/gpt-4o-mini", input: "Hi", ...body },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { id: string };
    };
    try {
      f.llm.script({ text: "One." }, { text: "Two." }, { text: "Three." }, { text: "Four." });
      await create({ store: false });
      const stored = (await f.loopd.app.inject({ method: "POST", url: "/v1/conversations", payload: {} })).json();
      await create({ store: false, conversation: stored.id });
      const kept = await create({});
      await create({ store: false, previous_response_id: kept.id });
    } finally {
      watching = false;
      await watch;
    }
    const throwaways = [...seen].filter(([, marked]) => marked);
    const unmarked = [...seen].filter(([, marked]) => !marked).map(([id]) => id);
    // Three made for store: false; the stored conversation and the stored response's are never marked.
    expect(throwaways).toHaveLength(3);
    expect(unmarked).toHaveLength(2);
  },
);
