import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { openDatabase } from "../../src/store/db.js";
import { startFakeLlm } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { startLoopd } from "../support/helpers/start-loopd.js";
import { admin } from "../support/helpers/test-database.js";
import { runProgram } from "../e2e/run-program.js";

vi.setConfig({ testTimeout: 150_000 });

/*
 * Moving from the embedded database to a Postgres server: `npm run
 * db:export` writes pg_dump's SQL, psql loads it, and loopd on that server
 * has every conversation as it was. This is about a real server, so it runs
 * against the machine's Postgres whichever database the rest of the suite uses.
 */
const serverUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const name = `loopd_export_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const scratch = mkdtempSync(path.join(tmpdir(), "loopd-export-"));
afterAll(async () => {
  await admin(serverUrl, `drop database if exists ${name} with (force)`);
  rmSync(scratch, { recursive: true, force: true });
});

test("npm run db:export, then psql into a Postgres server: loopd there has the conversations, and goes on", async () => {
  const llm = await startFakeLlm();
  const dataDir = path.join(scratch, "data");
  const embedded = await openDatabase({ dataDir });
  await embedded.migrate();
  let loopd = await startLoopd({ database: embedded, llm });
  const conversation = await api(loopd.app).createConversation({ provider: "mock", title: "moving house" });
  await api(loopd.app).send(conversation.id, { content: "What is 12*7?" });
  const before = await api(loopd.app).history(conversation.id);
  expect(before).toHaveLength(4);

  // While the embedded database is open, the export is refused like every second opener.
  const refused = await runProgram("src/cli/export.ts", {
    args: [path.join(scratch, "early.sql")],
    env: { DATA_DIR: dataDir },
  });
  expect(refused.code).toBe(1);
  expect(refused.output).toMatch(
    /^db:export cannot run: the embedded database in .* is already open|^db:export cannot run: the embedded database in .* is in use by process/,
  );
  await loopd.close();
  await embedded.close();

  // Into reports/ of its working folder, dated; a second export gets a name of its own.
  const exported = await runProgram("src/cli/export.ts", { cwd: scratch, env: { DATA_DIR: dataDir } });
  expect(exported.stderr).toBe("");
  expect(exported.code).toBe(0);
  const file = path.join(scratch, "reports", `loopd-${new Date().toISOString().slice(0, 10)}.sql`);
  expect(exported.stdout).toContain(`the embedded database in ${dataDir} is in ${file}\n`);
  expect(readFileSync(file, "utf8")).toContain("CREATE TABLE public.messages");
  const again = await runProgram("src/cli/export.ts", { cwd: scratch, env: { DATA_DIR: dataDir } });
  expect(again.stdout).toContain(`is in ${file.replace(/\.sql$/, "-2.sql")}\n`);

  await admin(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  execFileSync("psql", [url.toString(), "--quiet", "--set", "ON_ERROR_STOP=1", "--file", file], { stdio: "pipe" });
  const server = await openDatabase({ databaseUrl: url.toString(), poolSize: 3 });
  try {
    // The migrations came with the data: nothing left to apply, nothing applied twice.
    await server.migrate();
    loopd = await startLoopd({ database: server, llm });
    expect(await api(loopd.app).history(conversation.id)).toEqual(before);
    expect((await loopd.app.inject({ method: "GET", url: `/conversations/${conversation.id}` })).json()).toMatchObject({
      title: "moving house",
      message_count: 4,
    });
    const next = (await api(loopd.app).send(conversation.id, { content: "What is 2^10?" })).json();
    expect(next.messages.map((m: { seq: number }) => m.seq)).toEqual([5, 6, 7, 8]);
    await loopd.close();
  } finally {
    await server.close();
    await llm.close();
  }
});
