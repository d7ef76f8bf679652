import pg from "pg";
import { startLoopdSubject, type LongRunSubject } from "../floor/long-run-subjects.js";
import { openLongRunBench } from "../floor/long-run-bench.js";
import { toolStepsThenAnswer } from "../floor/long-run-scenario.js";
import { answerLongRuns, measureQuietest, MIN_STEPS_PER_ROW, type QuietRule } from "../floor/long-runs.js";
import { markdownTable } from "../lib/markdown-table.js";
import type { WindowFigures } from "../lib/measure-window.js";

export interface TraceOverheadRow {
  steps: number;
  runs: number;
  on: WindowFigures;
  off: WindowFigures;
  /** The compact trace (NDJSON, tool outputs and answers included) of the last run, per step: constant when the trace grows linearly. */
  traceBytesPerStep: number;
  /** What its spans take (`pg_column_size` of its `run_spans` rows and of its messages' `span`), per step; Postgres only. */
  storedBytesPerStep: number | null;
}

/**
 * trace: What the trace costs: the long-run scenario of floor (a ~1 KB tool
 * result per step) on two loopd processes of this checkout, one with
 * `TRACE=off`, each on its own fresh database, measured in turn for each
 * step count: time, CPU and WAL per step, and the size of the trace.
 */
export async function measureTraceOverhead({
  serverUrl,
  stepCounts,
  logLevel,
  quiet,
  progress,
}: {
  serverUrl: string | undefined;
  stepCounts: number[];
  logLevel: string;
  quiet: QuietRule;
  progress: (line: string) => void;
}): Promise<TraceOverheadRow[]> {
  const bench = await openLongRunBench({ serverUrl, stepCounts, logLevel });
  const { llm, monitor, env, subjects } = bench;
  try {
    const on = await startLoopdSubject({ name: "loopd", serverUrl, env: { ...env, TRACE: "on" } });
    subjects.push(on);
    const off = await startLoopdSubject({ name: "loopd TRACE=off", serverUrl, env: { ...env, TRACE: "off" } });
    subjects.push(off);
    llm.respond = toolStepsThenAnswer(5);
    for (const subject of subjects) await (await subject.prepare({ runs: 3, steps: 5 }))();

    const rows: TraceOverheadRow[] = [];
    for (const steps of stepCounts) {
      const runs = Math.ceil(MIN_STEPS_PER_ROW / steps);
      answerLongRuns(llm, steps);
      const measure = (subject: LongRunSubject) =>
        measureQuietest({
          subject,
          monitor,
          runs,
          steps,
          quiet,
          progress: (attempt) =>
            progress(
              `${serverUrl ? "postgres" : "pglite"}: ${subject.name}, ${runs} run(s) of ${steps} tool steps (attempt ${attempt})`,
            ),
        });
      const offFigures = await measure(off);
      const onFigures = await measure(on);
      const last = await lastTrace(on.url!);
      const stored = on.database.open.databaseUrl
        ? await storedSpanBytes(on.database.open.databaseUrl, last.runId)
        : null;
      rows.push({
        steps,
        runs,
        off: offFigures,
        on: onFigures,
        traceBytesPerStep: last.bytes / steps,
        storedBytesPerStep: stored === null ? null : stored / steps,
      });
    }
    return rows;
  } finally {
    await bench.close();
  }
}

/** The newest run, and the size of its compact trace as NDJSON. */
async function lastTrace(url: string): Promise<{ runId: string; bytes: number }> {
  const get = async (path: string, accept = "application/json") => {
    const res = await fetch(`${url}${path}`, { headers: { accept } });
    if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
    return res;
  };
  const conv = ((await (await get("/conversations?limit=1")).json()) as { data: { id: string }[] }).data[0]!.id;
  const run = ((await (await get(`/conversations/${conv}/runs?limit=1`)).json()) as { data: { id: string }[] }).data[0]!
    .id;
  return {
    runId: run,
    bytes: (await (await get(`/conversations/${conv}/runs/${run}/trace`, "application/x-ndjson")).arrayBuffer())
      .byteLength,
  };
}

async function storedSpanBytes(databaseUrl: string, runId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string }>(
      `select (select coalesce(sum(pg_column_size(s.*)), 0) from run_spans s where s.run_id = $1)
            + (select coalesce(sum(pg_column_size(m.span)), 0) from messages m where m.run_id = $1) as bytes`,
      [runId],
    );
    return Number(rows[0]!.bytes);
  } finally {
    await client.end();
  }
}

const fixed = (n: number | null, digits: number) => (n === null || !Number.isFinite(n) ? "–" : n.toFixed(digits));
const ratio = (a: number | null, b: number | null) =>
  a === null || b === null || b === 0 ? "–" : `${(a / b).toFixed(2)}×`;

/** trace: per tool step, TRACE=off against on. */
export function traceOverheadTable(kind: string, rows: TraceOverheadRow[]): string {
  return markdownTable(
    [
      "db",
      "steps",
      "ms/step off",
      "ms/step on",
      "ms ratio",
      "CPU ms/step off",
      "CPU on",
      "CPU ratio",
      "WAL B/step off",
      "WAL on",
      "WAL ratio",
      "stored B/step",
      "export B/step",
      "others' CPU (off, on)",
    ],
    rows.map(({ steps, runs, on, off, traceBytesPerStep, storedBytesPerStep }) => {
      const per = (f: WindowFigures) => {
        const n = runs * steps;
        return {
          ms: f.wallMs / n,
          cpu: (f.processCpuMs + (f.backendsCpuMs ?? 0)) / n,
          wal: f.walBytes === null ? null : f.walBytes / n,
        };
      };
      const a = per(off);
      const b = per(on);
      return [
        kind,
        String(steps),
        fixed(a.ms, 2),
        fixed(b.ms, 2),
        ratio(b.ms, a.ms),
        fixed(a.cpu, 2),
        fixed(b.cpu, 2),
        ratio(b.cpu, a.cpu),
        fixed(a.wal, 0),
        fixed(b.wal, 0),
        ratio(b.wal, a.wal),
        fixed(storedBytesPerStep, 0),
        fixed(traceBytesPerStep, 0),
        `${(off.othersCpuShare * 100).toFixed(0)}%, ${(on.othersCpuShare * 100).toFixed(0)}%`,
      ];
    }),
  );
}
