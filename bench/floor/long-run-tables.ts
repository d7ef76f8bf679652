import type { LongRunRow } from "./long-runs.js";
import { markdownTable } from "../lib/markdown-table.js";

const fixed = (n: number | null | undefined, digits: number) =>
  n === null || n === undefined || !Number.isFinite(n) ? "–" : n.toFixed(digits);
const percent = (share: number) => (Number.isFinite(share) ? `${Math.max(0, share * 100).toFixed(0)}%` : "–");
const ratio = (a: number | null, b: number | null) =>
  a === null || b === null || b === 0 ? "–" : `${(a / b).toFixed(2)}×`;

/** Per tool step: a row's totals over all its runs' steps (the runs' fixed costs, and the final answer, included). */
function perStep(row: LongRunRow) {
  const steps = row.runs * row.steps;
  const cpu = row.processCpuMs + (row.backendsCpuMs ?? 0);
  return {
    ms: row.wallMs / steps,
    cpu: cpu / steps,
    backends: row.backendsCpuMs === null ? null : row.backendsCpuMs / steps,
    wal: row.walBytes === null ? null : row.walBytes / steps,
    statements: row.wire ? row.wire.statements / steps : null,
    roundTrips: row.wire ? row.wire.roundTrips / steps : null,
    transactions: row.wire ? row.wire.transactions / steps : null,
  };
}

function floorOf(rows: LongRunRow[], row: LongRunRow) {
  const floor = rows.find((r) => r.subject === "floor" && r.steps === row.steps);
  return floor ? perStep(floor) : null;
}

/** floor on Postgres: every figure per step, and loopd's over the floor's. */
export function postgresLongRunTable(rows: LongRunRow[]): string {
  return markdownTable(
    [
      "steps",
      "subject",
      "ms/step",
      "CPU ms/step",
      "of it backends",
      "WAL B/step",
      "statements/step",
      "round trips/step",
      "commits/step",
      "ms ÷ floor",
      "CPU ÷ floor",
      "WAL ÷ floor",
      "last request KB",
      "others' CPU",
      "load",
    ],
    rows.map((row) => {
      const s = perStep(row);
      const floor = row.subject === "floor" ? null : floorOf(rows, row);
      return [
        String(row.steps),
        row.subject,
        fixed(s.ms, 2),
        fixed(s.cpu, 2),
        fixed(s.backends, 2),
        fixed(s.wal, 0),
        fixed(s.statements, 2),
        fixed(s.roundTrips, 2),
        fixed(s.transactions, 2),
        floor ? ratio(s.ms, floor.ms) : "–",
        floor ? ratio(s.cpu, floor.cpu) : "–",
        floor ? ratio(s.wal, floor.wal) : "–",
        fixed(row.lastRequestBytes / 1024, 0),
        percent(row.othersCpuShare),
        fixed(row.load1, 2),
      ];
    }),
  );
}

/** floor on PGlite: the database is inside the process, so its CPU is the process's. */
export function pgliteLongRunTable(rows: LongRunRow[]): string {
  return markdownTable(
    [
      "steps",
      "subject",
      "ms/step",
      "CPU ms/step",
      "ms ÷ floor",
      "CPU ÷ floor",
      "last request KB",
      "others' CPU",
      "load",
    ],
    rows.map((row) => {
      const s = perStep(row);
      const floor = row.subject === "floor" ? null : floorOf(rows, row);
      return [
        String(row.steps),
        row.subject,
        fixed(s.ms, 2),
        fixed(s.cpu, 2),
        floor ? ratio(s.ms, floor.ms) : "–",
        floor ? ratio(s.cpu, floor.cpu) : "–",
        fixed(row.lastRequestBytes / 1024, 0),
        percent(row.othersCpuShare),
        fixed(row.load1, 2),
      ];
    }),
  );
}
