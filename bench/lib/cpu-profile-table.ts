/**
 * A V8 CPU profile (`node --cpu-prof`, BENCH_CPU_PROF_DIR) as two tables: the
 * functions costing most self time, and most inclusive time (a function
 * counted once per sample however deep it recurses), in ms per run, from the
 * first sample whose stack holds `--from` (a function's name: the startup
 * before it left out) to the end. Run by hand:
 *
 *   npx tsx bench/lib/cpu-profile-table.ts FILE.cpuprofile --runs 420 [--from runAgentLoop] [--top 25] [--own]
 *
 * `--own`: the inclusive table of loopd's own functions only (dist/, src/).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { markdownTable } from "./markdown-table.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = new Set(["(idle)", "(program)", "(root)"]);

/** `name file:line`, the file relative to its package or to dist/src. */
function frameName({ functionName, url, lineNumber }: ProfileNode["callFrame"]): string {
  const file = url.replace(/^file:\/\//, "");
  const short = file.includes("node_modules/")
    ? file.slice(file.lastIndexOf("node_modules/") + "node_modules/".length)
    : /\/(dist|src)\//.test(file)
      ? file.slice(file.search(/\/(dist|src)\//) + 1)
      : path.basename(file);
  return `${functionName || "(anonymous)"}${short ? ` ${short}:${lineNumber + 1}` : ""}`;
}

export interface ProfileTotals {
  /** CPU time in the window (ms), idle left out; GC included. */
  busyMs: number;
  self: Map<string, number>;
  inclusive: Map<string, number>;
}

export function profileTotals(profile: Profile, from?: string): ProfileTotals {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id: number): ProfileNode[] => {
    const stack: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!);
    return stack;
  };
  const totals: ProfileTotals = { busyMs: 0, self: new Map(), inclusive: new Map() };
  let started = from === undefined;
  profile.samples.forEach((id, i) => {
    // timeDeltas[i] is the time before sample i; the next one's is this sample's length.
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const stack = stackOf(id);
    started ||= stack.some((n) => n.callFrame.functionName === from);
    const top = stack[0]!;
    if (!started || IDLE.has(top.callFrame.functionName)) return;
    totals.busyMs += ms;
    const self = frameName(top.callFrame);
    totals.self.set(self, (totals.self.get(self) ?? 0) + ms);
    for (const name of new Set(stack.map((n) => frameName(n.callFrame))))
      totals.inclusive.set(name, (totals.inclusive.get(name) ?? 0) + ms);
  });
  return totals;
}

export function profileTables(
  totals: ProfileTotals,
  { runs, top, own = false }: { runs: number; top: number; own?: boolean },
): string {
  const table = (title: string, costs: Map<string, number>, keep: (name: string) => boolean = () => true) =>
    markdownTable(
      [title, "ms/run", "share"],
      [...costs]
        .filter(([name]) => !IDLE.has(name) && keep(name))
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([name, ms]) => [`\`${name}\``, (ms / runs).toFixed(3), `${((ms / totals.busyMs) * 100).toFixed(1)}%`]),
    );
  return [
    `busy ${totals.busyMs.toFixed(0)} ms over ${runs} runs: ${(totals.busyMs / runs).toFixed(2)} ms/run`,
    "",
    table("self time", totals.self),
    "",
    own
      ? table("inclusive time (loopd's functions)", totals.inclusive, (name) => / (dist|src)\//.test(name))
      : table("inclusive time", totals.inclusive),
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: "string" },
      from: { type: "string" },
      top: { type: "string", default: "25" },
      own: { type: "boolean", default: false },
    },
  });
  const profile = JSON.parse(readFileSync(positionals[0]!, "utf8")) as Profile;
  const totals = profileTotals(profile, values.from);
  console.log(profileTables(totals, { runs: Number(values.runs ?? 1), top: Number(values.top), own: values.own }));
}
