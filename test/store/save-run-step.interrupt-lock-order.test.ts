import pg from "pg";
import { afterAll, beforeAll, expect, test } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { testTools } from "../support/helpers/test-tools.js";

/**
 * Postgres only (found by review). A run's end (loopd_save) updates its
 * conversation; an interrupt holds the conversation's row lock and asks the
 * running run to stop (an update of the run's row). Before the fix the end
 * took the run's row first and the conversation's second, so the two could
 * deadlock (a 500 to the interrupt, or a lost end). The unlucky scheduler is
 * made certain here by a pg_sleep inside loopd_save after its locks.
 */
const f = useLoopd({ listen: true, tools: testTools() });
const post = (path: string, body: unknown) =>
  fetch(`${f.loopd.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const getJson = async (path: string): Promise<any> => (await fetch(`${f.loopd.url}${path}`)).json();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let client: pg.Client;

beforeAll(async () => {
  if (testDatabaseKind !== "postgres") return;
  client = new pg.Client({ connectionString: f.testDb.url });
  await client.connect();
  const def = (await client.query(`select pg_get_functiondef('loopd_save'::regproc) as d`)).rows[0].d as string;
  const slowed = def.replace(
    /IF NOT FOUND THEN\s+RETURN false;\s+END IF;/,
    `IF NOT FOUND THEN RETURN false; END IF;
     IF p_end IS NOT NULL AND p_end->>'status' <> 'requires_action' THEN PERFORM pg_sleep(0.6); END IF;`,
  );
  expect(slowed).not.toBe(def);
  await client.query(slowed);
});
afterAll(async () => client?.end());

test.runIf(testDatabaseKind === "postgres")(
  "an interrupt arriving while the running run records its end: no deadlock, both requests succeed",
  async () => {
    const conv: any = await (await post("/conversations", { provider: "anthropic" })).json();
    f.llm.script({ text: "first done" }, { text: "second done" });
    const first: any = await (
      await post(`/conversations/${conv.id}/messages`, { content: "first", wait: false })
    ).json();
    // Wait until the first run is inside its final loopd_save (holding its run row lock).
    for (let i = 0; i < 200; i++) {
      const { rows } = await client.query(
        `select 1 from pg_stat_activity where query like '%loopd_save%' and state = 'active' and pid <> pg_backend_pid()`,
      );
      if (rows.length > 0) break;
      await sleep(10);
    }
    const res = await post(`/conversations/${conv.id}/messages`, { content: "second", on_busy: "interrupt" });
    const body: any = await res.json();
    const firstNow = await getJson(`/conversations/${conv.id}/runs/${first.run.id}`);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.run.status).toBe("completed");
    expect(["completed", "cancelled"]).toContain(firstNow.status);
  },
);
