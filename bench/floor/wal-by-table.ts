/**
 * Where a long run's WAL goes: one loopd (this checkout, or
 * BENCH_BASELINE_DIR) runs BENCH_WAL_RUNS runs of BENCH_WAL_STEPS tool steps
 * (floor's scenario), after a checkpoint as floor's windows start, and the
 * WAL records of its database between the two positions are summed by
 * relation and record type (pg_walinspect, installed in that database).
 * Records with no block of the database (commits, other sessions' work) are
 * counted apart. BENCH_WAL_SUBJECT=floor measures the floor instead (loopd
 * started only to record its request, as floor does). Run by hand:
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/floor/wal-by-table.ts
 */
import pg from "pg";
import { markdownTable } from "../lib/markdown-table.js";
import { openLongRunBench } from "./long-run-bench.js";
import { toolStepsThenAnswer } from "./long-run-scenario.js";
import { startFloorSubject, startLoopdSubject } from "./long-run-subjects.js";
import { recordLoopdRequest } from "./long-runs.js";

const serverUrl = process.env.BENCH_DATABASE_URL;
if (!serverUrl) throw new Error("BENCH_DATABASE_URL is required (a Postgres server)");
const steps = Number(process.env.BENCH_WAL_STEPS ?? 100);
const runs = Number(process.env.BENCH_WAL_RUNS ?? 3);
const checkout = process.env.BENCH_BASELINE_DIR || undefined;
const floor = process.env.BENCH_WAL_SUBJECT === "floor";

const bench = await openLongRunBench({ serverUrl, stepCounts: [steps], logLevel: "warn" });
try {
  const loopd = await startLoopdSubject({
    name: checkout ? "loopd before" : "loopd",
    serverUrl,
    env: { ...bench.env, ...(process.env.TRACE && { TRACE: process.env.TRACE }) },
    ...(checkout && { checkout }),
  });
  bench.subjects.push(loopd);
  const subject = floor
    ? await startFloorSubject({
        serverUrl,
        llmUrl: bench.llm.url,
        workspaceDir: bench.workspaceDir,
        request: await recordLoopdRequest(bench.llm, loopd),
      })
    : loopd;
  if (floor) bench.subjects.push(subject);
  const client = new pg.Client({ connectionString: subject.database.open.databaseUrl });
  await client.connect();
  try {
    await client.query("create extension if not exists pg_walinspect");
    bench.llm.respond = toolStepsThenAnswer(steps);
    const work = await subject.prepare({ runs, steps });
    await subject.database.settle();
    // The run's WAL kept until read (others' checkpoints recycle segments): a slot of this bench's own, dropped after.
    const slot = `loopd_wal_by_table_${process.pid}`;
    await client.query("select pg_create_physical_replication_slot($1, true)", [slot]);
    try {
      await client.query("checkpoint");
      // Flushed: every commit of the runs is (synchronous_commit), and pg_walinspect reads no further.
      const lsn = async () =>
        (await client.query<{ lsn: string }>("select pg_current_wal_flush_lsn() as lsn")).rows[0]!.lsn;
      const start = await lsn();
      await work();
      console.log(walTable(await walByRelation(client, start, await lsn()), runs * steps));
      if (!floor) console.log(`\n${await rowSizes(client)}`);
    } finally {
      await client.query("select pg_drop_replication_slot($1)", [slot]);
    }
  } finally {
    await client.end();
  }
} finally {
  await bench.close();
}

interface WalRow {
  rel: string;
  kind: string;
  records: string;
  bytes: string;
  fpi: string;
}

/** The WAL records between two positions, by the relation of their first block (in this database) and type. */
async function walByRelation(client: pg.Client, start: string, end: string): Promise<WalRow[]> {
  const { rows } = await client.query<WalRow>(
    `with r as (
       select record_length, fpi_length, resource_manager, record_type,
         (regexp_match(block_ref, 'rel \\d+/(\\d+)/(\\d+)'))[1]::oid as db,
         (regexp_match(block_ref, 'rel \\d+/(\\d+)/(\\d+)'))[2]::oid as node
       from pg_get_wal_records_info($1, $2)),
     here as (select oid from pg_database where datname = current_database())
     select case when db = here.oid then coalesce(c.relname, 'relfilenode ' || node) else '(no block of this database)' end as rel,
       case when db = here.oid then resource_manager || ' ' || record_type else resource_manager end as kind,
       count(*) as records, sum(record_length) as bytes, sum(fpi_length) as fpi
     from r cross join here left join pg_class c on c.relfilenode = r.node and r.db = here.oid
     group by 1, 2 order by sum(record_length) desc`,
    [start, end],
  );
  return rows;
}

function walTable(rows: WalRow[], toolSteps: number): string {
  const total = rows.reduce((s, r) => s + Number(r.bytes), 0);
  return [
    `${floor ? "floor" : (checkout ?? "this checkout")}: ${runs} runs of ${steps} tool steps, ${total} B of WAL records (${(total / toolSteps).toFixed(0)} B/step)`,
    "",
    markdownTable(
      ["relation", "record", "records/step", "B/step", "of it full-page images", "share"],
      rows.map((r) => [
        r.rel,
        r.kind,
        (Number(r.records) / toolSteps).toFixed(2),
        (Number(r.bytes) / toolSteps).toFixed(0),
        (Number(r.fpi) / toolSteps).toFixed(0),
        `${((Number(r.bytes) / total) * 100).toFixed(1)}%`,
      ]),
    ),
  ].join("\n");
}

/** What the rows a run writes hold: bytes per row of each kind (a message's role, an event's or span's type), and of it the trace's. */
async function rowSizes(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ rel: string; kind: string; n: string; row: string; trace: string }>(
    `select 'messages' as rel, role as kind, count(*) as n, avg(pg_column_size(m.*)) as row, avg(coalesce(pg_column_size(span), 0)) as trace from messages m group by role
     union all select 'run_events', type, count(*), avg(pg_column_size(e.*)), 0 from run_events e group by type
     union all select 'run_spans', type, count(*), avg(pg_column_size(s.*)), avg(pg_column_size(s.*)) from run_spans s group by type
     order by 1, 3 desc`,
  );
  return markdownTable(
    ["relation", "kind", "rows", "B/row", "of it the trace's"],
    rows.map((r) => [r.rel, r.kind, r.n, Number(r.row).toFixed(0), Number(r.trace).toFixed(0)]),
  );
}
