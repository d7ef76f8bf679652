import { sql } from "drizzle-orm";
import { describe, expect, onTestFinished, test } from "vitest";
import { findInCauseChain } from "../../src/errors.js";
import { isDatabaseUnavailable } from "../../src/http/plugins/error-handler.js";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const POOL_SIZE = 3;
const CONNECT_TIMEOUT_MS = 500;
const f = useLoopd({ pool: { poolSize: POOL_SIZE, connectTimeoutMs: CONNECT_TIMEOUT_MS } });

const getConversation = (id: string) => f.loopd.app.inject({ method: "GET", url: `/conversations/${id}` });
const codeOf = (err: unknown) => findInCauseChain(err, (e) => (e as { code?: unknown }).code);
/** Both drivers answer `execute` with `{ rows }`; the driver-neutral Db type does not say so. */
const rowsOf = async <T>(query: Promise<unknown>) => ((await query) as { rows: T[] }).rows;

describe.runIf(testDatabaseKind === "postgres")(
  "the pool's limits on Postgres (PGlite is one in-process connection: no pool, no server timeouts)",
  () => {
    test("with every pool connection held, a request answers 503 unavailable with Retry-After after about DB_CONNECT_TIMEOUT_MS, saying the database is busy (not unreachable), and succeeds once they are free", async () => {
      const conv = (await f.loopd.app.inject({ method: "POST", url: "/conversations" })).json();
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      onTestFinished(() => release());
      const holding: Array<Promise<void>> = [];
      const held = Array.from({ length: POOL_SIZE }, () => {
        let isHolding = () => {};
        holding.push(new Promise((resolve) => (isHolding = resolve)));
        return f.database.db.transaction(async (tx) => {
          await tx.execute(sql`select 1`);
          isHolding();
          await released;
        });
      });
      // A holder that could not get its connection fails the test here instead of leaving it waiting.
      await Promise.race([Promise.all(holding), Promise.all(held)]);

      const started = performance.now();
      const res = await getConversation(conv.id);
      const waited = performance.now() - started;
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({
        error: {
          code: "unavailable",
          message: expect.stringMatching(/^the database is busy: every connection loopd holds to it stayed in use/),
          details: { reason: "database_busy" },
        },
      });
      expect(res.headers["retry-after"]).toMatch(/^[1-9]\d*$/);
      expect(waited).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS - 5);
      expect(waited).toBeLessThan(CONNECT_TIMEOUT_MS + 1_000);
      // /readyz says the same: busy, not unreachable; /healthz asks no database.
      const ready = await f.loopd.app.inject({ method: "GET", url: "/readyz" });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().error).toMatchObject({
        code: "unavailable",
        message: expect.stringMatching(/^the database is busy/),
        details: { reason: "database" },
      });
      expect((await f.loopd.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);

      release();
      await Promise.all(held);
      expect((await getConversation(conv.id)).statusCode).toBe(200);
    });

    test("a statement that runs past DB_STATEMENT_TIMEOUT_MS is cancelled by the server, which counts as the database being unavailable", async () => {
      const database = await f.testDb.open({ statementTimeoutMs: 200 });
      onTestFinished(() => database.close());
      const error = await database.db.execute(sql`select pg_sleep(5)`).catch((e: unknown) => e);
      expect(codeOf(error)).toBe("57014");
      expect(isDatabaseUnavailable(error)).toBe(true);
    });

    test("a transaction left idle past DB_IDLE_IN_TRANSACTION_TIMEOUT_MS is ended by the server; the process and the pool go on", async () => {
      const database = await f.testDb.open({ idleInTransactionTimeoutMs: 200 });
      onTestFinished(() => database.close());
      const error = await database.db
        .transaction(async (tx) => {
          const [session] = await rowsOf<{ pid: number }>(tx.execute(sql`select pg_backend_pid() as pid`));
          await sessionEnded(session!.pid);
          await tx.execute(sql`select 1`);
        })
        .catch((e: unknown) => e);
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(await rowsOf(database.db.execute(sql`select 1 as one`))).toEqual([{ one: 1 }]);
    });
  },
);

describe.runIf(testDatabaseKind === "pglite")(
  "on PGlite (one in-process connection: there is no pool to saturate)",
  () => {
    test("a closed database answers 503 unavailable with Retry-After", async () => {
      const conv = (await f.loopd.app.inject({ method: "POST", url: "/conversations" })).json();
      await f.database.close();
      const res = await getConversation(conv.id);
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe("unavailable");
      expect(res.headers["retry-after"]).toMatch(/^[1-9]\d*$/);
    });
  },
);

/** Resolves once the server has ended the session `pid`, as seen from the fixture's own pool. */
async function sessionEnded(pid: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const [found] = await rowsOf<{ n: number }>(
      f.database.db.execute(sql`select count(*)::int as n from pg_stat_activity where pid = ${pid}`),
    );
    if (found!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`session ${pid} is still open after 5 s`);
}
