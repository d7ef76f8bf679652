import { expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { usePostgresSession } from "../support/helpers/use-postgres-session.js";

/**
 * Postgres only (CI13's one failure, made certain here). An interrupt reads
 * the run holding the conversation as running (woken to probe a model, in
 * another process) and asks it to stop; a run parking out an outage takes no
 * conversation lock, so it may park between the two. Before the fix the ask
 * matched no row (it was for running runs only), nobody ran the parked run
 * to be told, and the interrupt waited behind it until its give-up time,
 * probed again and again. The other process is this test's own connection:
 * it holds the run's row while the interrupt reads, then parks it.
 */
const f = useLoopd({ env: { MODEL_COOLDOWN_MS: "200" } });
const client = () => api(f.loopd.app);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const session = usePostgresSession(() => f.testDb.url);

test.runIf(testDatabaseKind === "postgres")(
  "an interrupt racing a probe that parks again: the parked run ends superseded and the interrupt runs",
  async () => {
    const conv = await client().createConversation({ provider: "anthropic", on_provider_outage: "wait" });
    f.llm.respond = () => ({ status: 529, message: "Overloaded" });
    const { run } = (await client().send(conv.id, { content: "Hi" })).json();
    expect(run.status).toBe("waiting");

    // Another process claims it to probe the model, and holds its row as it parks it again.
    await session.db.query(
      `update runs set status = 'running', lease_owner = 'elsewhere', lease_expires_at = now() + interval '1 hour'
         where id = $1 and status = 'waiting'`,
      [run.id],
    );
    await session.db.query("begin");
    await session.db.query("select 1 from runs where id = $1 for update", [run.id]);

    f.llm.respond = () => ({ text: "Done." });
    const interrupting = f.loopd.app.inject({
      method: "POST",
      url: `/conversations/${conv.id}/messages`,
      payload: { content: "Forget it.", on_busy: "interrupt", wait: false },
    });
    // The interrupt read the run as running and now waits for its row.
    for (let i = 0; ; i++) {
      const { rows } = await session.db.query(
        `select 1 from pg_locks l join pg_stat_activity a using (pid)
           where not l.granted and l.locktype in ('tuple', 'transactionid') and a.pid <> pg_backend_pid()`,
      );
      if (rows.length > 0) break;
      if (i > 500) throw new Error("the interrupt never waited for the run's row");
      await sleep(10);
    }
    await session.db.query(
      `update runs set status = 'waiting', lease_owner = null, lease_expires_at = null,
         wake_at = now() + interval '1 hour', outage_probes = outage_probes + 1
         where id = $1`,
      [run.id],
    );
    await session.db.query("commit");

    const res = await interrupting;
    expect(res.statusCode, res.body).toBe(202);
    const get = async (id: string) =>
      (await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${id}` })).json();
    // Ended in the interrupt's own transaction: no wake, probe or sweep needed.
    expect(await get(run.id)).toMatchObject({ status: "cancelled", stop_reason: "superseded" });
    const interrupt = res.json().run.id;
    for (let i = 0; (await get(interrupt)).status !== "completed"; i++) {
      if (i > 300) throw new Error(`the interrupt never completed: ${JSON.stringify(await get(interrupt))}`);
      await sleep(50);
    }
    const history = await client().history(conv.id);
    expect(history.map((m: { role: string }) => m.role)).toEqual(["user", "user", "assistant"]);
  },
);
