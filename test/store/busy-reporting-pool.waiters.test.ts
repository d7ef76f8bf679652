import { expect, test } from "vitest";
import type pg from "pg";
import { BusyReportingPool } from "../../src/store/busy-reporting-pool.js";

// A check (passing): the pool's waiting askers are forgotten whatever answers them (a connection, a timeout, a refused server, the pool's end).
const url = process.env.TEST_DATABASE_URL;

test.skipIf(!url)(
  "BusyReportingPool: no asker is left counted as waiting after timeouts, errors, a pool ended under waiters",
  async () => {
    const pool = new BusyReportingPool({ connectionString: url, max: 1, connectionTimeoutMillis: 200 });
    pool.on("error", () => {});
    const held = (await pool.connect()) as pg.PoolClient;
    expect(pool.longestWaitMs()).toBe(0);
    // Callback path (pool.query) and promise path (connect), both timing out.
    const waits = [pool.query("select 1"), pool.query("select 2"), pool.connect()].map((p) =>
      p.then(
        () => "ok",
        (e: Error) => e.name,
      ),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(pool.longestWaitMs()).toBeGreaterThan(20);
    expect(await Promise.all(waits)).toEqual(["DatabaseBusyError", "DatabaseBusyError", "DatabaseBusyError"]);
    expect(pool.longestWaitMs()).toBe(0);
    // A waiter that gets the connection once it is released: counted with its wait.
    const before = pool.acquired;
    const next = pool.query("select 3");
    await new Promise((r) => setTimeout(r, 30));
    held.release();
    await next;
    expect(pool.acquired).toBe(before + 1);
    expect(pool.longestWaitMs()).toBe(0);
    // A statement that fails on the server: its connection was handed out, nothing left waiting.
    await expect(pool.query("select nonsense_column")).rejects.toThrow();
    expect(pool.longestWaitMs()).toBe(0);
    // Ended with a waiter: the waiter is answered (by its timeout at the latest) and forgotten.
    const again = (await pool.connect()) as pg.PoolClient;
    const late = pool.query("select 4").then(
      () => "ok",
      (e: Error) => e.message,
    );
    const ending = pool.end();
    again.release();
    await late;
    await ending;
    expect(pool.longestWaitMs()).toBe(0);
    await expect(pool.query("select 5")).rejects.toThrow(/after calling end/);
    expect(pool.longestWaitMs()).toBe(0);

    // A server that refuses connections: each ask answered with the error, none left waiting.
    const refused = new BusyReportingPool({
      connectionString: "postgres://postgres@127.0.0.1:1/none",
      max: 2,
      connectionTimeoutMillis: 500,
    });
    refused.on("error", () => {});
    await Promise.allSettled([refused.query("select 1"), refused.connect(), refused.query("select 1")]);
    expect(refused.longestWaitMs()).toBe(0);
    expect(refused.acquired).toBe(0);
    await refused.end();
  },
);
