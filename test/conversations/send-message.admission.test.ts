import { sql } from "drizzle-orm";
import { expect, onTestFinished, test, vi } from "vitest";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const ADMISSION_WAIT_MS = 300;
// One connection on Postgres, as PGlite has: holding it holds the whole database.
const f = useLoopd({
  pool: { poolSize: 1, connectTimeoutMs: 10_000 },
  env: { DB_ADMISSION_WAIT_MS: String(ADMISSION_WAIT_MS) },
});

const post = (url: string, payload?: object) =>
  f.loopd.app.inject({ method: "POST", url, ...(payload && { payload }) });

/** Holds the database (the pool's only connection; PGlite's one session) in a transaction until released. */
async function holdDatabase(): Promise<() => Promise<void>> {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding = () => {};
  const held = new Promise<void>((resolve) => (holding = resolve));
  const transaction = f.database.db.transaction(async (tx) => {
    await tx.execute(sql`select 1`);
    holding();
    await released;
  });
  await Promise.race([held, transaction]);
  const done = async () => {
    release();
    await transaction;
  };
  onTestFinished(done);
  return done;
}

test(`while a statement has waited more than DB_ADMISSION_WAIT_MS for the database (${testDatabaseKind}), a new run is refused at once with 503 database_busy and Retry-After, writing nothing; a run accepted before finishes, its events without a gap, and new runs are taken once the wait is over`, async () => {
  f.llm.script({ text: "first" }, { text: "third" });
  const accepted = (await post("/conversations")).json();
  const refused = (await post("/conversations")).json();

  const release = await holdDatabase();
  // Accepted before the wait grew: it waits for the database with the others.
  const first = post(`/conversations/${accepted.id}/messages`, { content: "one" });
  await vi.waitFor(() => expect(f.database.longestWaitMs()).toBeGreaterThan(ADMISSION_WAIT_MS), {
    timeout: 5_000,
    interval: 20,
  });

  const started = performance.now();
  const res = await post(`/conversations/${refused.id}/messages`, { content: "two" });
  expect(performance.now() - started).toBeLessThan(ADMISSION_WAIT_MS);
  expect(res.statusCode).toBe(503);
  expect(res.headers["retry-after"]).toMatch(/^[1-9]\d*$/);
  expect(res.json()).toEqual({
    error: {
      code: "unavailable",
      message: expect.stringMatching(
        /^the database is busy: a statement has waited \d+ ms for it, more than DB_ADMISSION_WAIT_MS \(300 ms\)/,
      ),
      details: { reason: "database_busy" },
    },
  });

  await release();
  const firstRun = (await first).json();
  expect(firstRun.run.status).toBe("completed");
  const events = await f.loopd.app.inject({
    method: "GET",
    url: `/conversations/${accepted.id}/runs/${firstRun.run.id}/events`,
  });
  const seqs = [...events.body.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  expect(seqs.length).toBeGreaterThan(2);

  // The refused request left nothing behind.
  const refusedState = (
    await f.loopd.app.inject({ method: "GET", url: `/conversations/${refused.id}/messages` })
  ).json();
  expect(refusedState.data).toEqual([]);
  expect((await f.loopd.app.inject({ method: "GET", url: `/conversations/${refused.id}/runs` })).json().data).toEqual(
    [],
  );

  const third = await post(`/conversations/${refused.id}/messages`, { content: "three" });
  expect(third.statusCode).toBe(200);
  expect(third.json().run.status).toBe("completed");
});
