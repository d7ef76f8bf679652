import { afterAll, expect, test } from "vitest";
import { openDatabase, type Database } from "../../src/store/db.js";
import { admin } from "../support/helpers/test-database.js";

/*
 * Several loopd processes starting at once on a fresh Postgres database all
 * migrate it. This is about a server shared by processes, so it runs against
 * the machine's Postgres whichever database the rest of the suite uses (the
 * embedded one belongs to a single process).
 */
const serverUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const name = `loopd_migrate_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const opened: Database[] = [];

afterAll(async () => {
  for (const d of opened) await d.close().catch(() => {});
  await admin(serverUrl, `drop database if exists ${name} with (force)`);
});

test("processes that start together on a fresh database all migrate it, one after the other", async () => {
  await admin(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  for (let i = 0; i < 4; i++) opened.push(await openDatabase({ databaseUrl: url.toString(), poolSize: 3 }));

  const outcomes = await Promise.allSettled(opened.map((d) => d.migrate()));
  expect(outcomes.map((o) => (o.status === "rejected" ? String(o.reason) : "ok"))).toEqual(["ok", "ok", "ok", "ok"]);
  const tables = await opened[0]!.db.execute(
    "select count(*)::int as n from information_schema.tables where table_schema = 'public' and table_name in ('conversations', 'messages', 'runs', 'run_events')" as never,
  );
  expect((tables as unknown as { rows: { n: number }[] }).rows[0]!.n).toBe(4);
});
