import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { runCli } from "./run-cli.js";
import { loadConfig } from "../config.js";
import { OperatorError } from "../errors.js";
import { PROVIDERS } from "../providers/registry.js";
import {
  AGENT_OPTION,
  agentRefsOf,
  callableWith,
  MOCK_BASE_URL_NOTE,
  MODEL_OPTIONS,
  modelOptionsOf,
  providersFor,
} from "./model-options.js";
import { readAgentVersions, UnknownAgent } from "./read-agent-versions.js";
import { writeOutputFile } from "./write-output-file.js";
import { evalReport } from "../evals/eval-report.js";
import { HEADER, rowOf, summaryLines } from "../evals/eval-summary.js";
import { loadEvalCases } from "../evals/load-eval-cases.js";
import { runEvals } from "../evals/run-evals.js";
import { changedCases, columnOf, comparisonLines } from "../evals/compare-evals.js";
import { comparisonReport } from "../evals/eval-report.js";
import { labelOf, type AgentUnderTest } from "../evals/agent-under-test.js";
import { holderOf } from "../store/data-dir-lock.js";

const USAGE =
  "usage: npm run eval -- <case file or folder> [--provider anthropic|openai|mock] [--model m] [--base-url u] [--system-file f] [--out report.json] [--min-pass 0.9] [--live-tools] [--concurrency 4] [--agent name@version …] [--url http://loopd:3000]";

/**
 * `npm run eval -- <cases>`: runs eval cases (made with `GET
 * …/runs/:run_id/eval-case`) through the real loop on a throw-away
 * database (see `runEvals`), prints a row per case and a summary, writes the
 * JSON report to `reports/` (or `--out`), and exits 1 when the pass rate is
 * under `--min-pass` (default 1: every case must pass). With `--agent` (once
 * or more), the cases run as each agent version instead of their own
 * settings, and the versions are compared side by side (`--min-pass` applies
 * to each).
 */
async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...MODEL_OPTIONS,
      "system-file": { type: "string" },
      out: { type: "string" },
      "min-pass": { type: "string" },
      "live-tools": { type: "boolean" },
      concurrency: { type: "string" },
      url: { type: "string" },
      ...AGENT_OPTION,
    },
  });
  const agentRefs = agentRefsOf(values.agent);
  if ("problem" in agentRefs) {
    console.error(agentRefs.problem);
    return 2;
  }
  const options = modelOptionsOf(values);
  const minPass = Number(values["min-pass"] ?? 1);
  const concurrency = Number(values.concurrency ?? 4);
  if (
    positionals.length !== 1 ||
    !options ||
    !(minPass >= 0 && minPass <= 1) ||
    !(Number.isInteger(concurrency) && concurrency >= 1)
  ) {
    console.error(USAGE);
    if (!(minPass >= 0 && minPass <= 1)) console.error("--min-pass is a pass rate from 0 to 1");
    if (!(Number.isInteger(concurrency) && concurrency >= 1))
      console.error("--concurrency is a whole number of at least 1");
    return 2;
  }
  const target = positionals[0]!;
  const cases = loadEvalCases(target);
  const system = values["system-file"] === undefined ? undefined : readSystemFile(values["system-file"]);
  const config = loadConfig(process.env);
  let agents: AgentUnderTest[] = [];
  if (agentRefs.refs.length > 0) {
    const serverUrl = values.url ?? (config.database.url ? undefined : holderOf(config.database.dataDir)?.url);
    if (serverUrl && !values.url)
      console.log(
        `the loopd server at ${serverUrl} holds ${config.database.dataDir}: reading the agents through its API`,
      );
    try {
      agents = await readAgentVersions({ refs: agentRefs.refs, config, serverUrl });
    } catch (err) {
      if (!(err instanceof UnknownAgent)) throw err;
      console.error(err.message);
      return 2;
    }
    const twice = agents.map(labelOf).find((label, i, all) => all.indexOf(label) !== i);
    if (twice) {
      console.error(
        `--agent: ${twice} is named twice (a bare name is its latest version): each column is another version`,
      );
      return 2;
    }
  }
  const { provider, model, baseURL } = options;
  const liveTools = values["live-tools"] === true;
  if (baseURL && provider && PROVIDERS[provider].offline) console.log(MOCK_BASE_URL_NOTE);
  const on = provider
    ? `${provider}/${model ?? "its default model"}`
    : model
      ? `each case's provider, model ${model}`
      : "each case's own provider and model";
  const what = agents.length > 0 ? `as ${agents.map(labelOf).join(", ")}` : `on ${on}`;
  console.log(
    `eval of ${cases.length} case${cases.length === 1 ? "" : "s"} from ${target} ${what}, ${liveTools ? "running the real tools" : "tools answered from the recorded results"}`,
  );
  console.log(HEADER);
  const startedAt = new Date();
  const evalAs = (agent: AgentUnderTest | undefined) =>
    runEvals({
      cases,
      config,
      providers: providersFor(config, { baseURL }),
      canCall: callableWith(config, { baseURL }),
      liveTools,
      concurrency,
      overrides: { provider, model, system },
      agent,
      // A row's first line is the case's; the version's label goes there, before what failed.
      onResult: (result) =>
        console.log(agent ? rowOf(result).replace(/\n|$/, `  (${labelOf(agent)})$&`) : rowOf(result)),
    });
  const reportOptions = {
    provider,
    model,
    baseURL,
    systemFile: values["system-file"],
    liveTools,
    concurrency,
    minPass,
  };
  let report: { passed: boolean };
  const under: string[] = [];
  if (agents.length === 0) {
    const { results, summary } = await evalAs(undefined);
    for (const line of summaryLines(summary)) console.log(line);
    report = evalReport({ target, startedAt, options: reportOptions, summary, results });
    if (summary.pass_rate < minPass) under.push(`pass rate ${(summary.pass_rate * 100).toFixed(1)}%`);
  } else {
    const columns = [];
    // One version after the other: each has the machine, so their latencies compare.
    for (const agent of agents) columns.push(columnOf(agent, await evalAs(agent), minPass));
    const changed = changedCases(columns);
    for (const line of comparisonLines(columns, changed)) console.log(line);
    report = comparisonReport({ target, startedAt, options: reportOptions, columns, changed });
    for (const c of columns.filter((c) => !c.passed))
      under.push(`${c.label}'s pass rate ${(c.summary.pass_rate * 100).toFixed(1)}%`);
  }
  const stamp = startedAt.toISOString().replace(/[-:]/g, "").replace(/\..*/, "").replace("T", "-");
  const written = writeOutputFile({
    name: `eval-${stamp}`,
    extension: "json",
    out: values.out,
    text: `${JSON.stringify(report, null, 2)}\n`,
  });
  console.log(`report: ${written.file}${written.replaced ? " (replaced the earlier file: --out names it)" : ""}`);
  if (report.passed) return 0;
  console.error(`${under.join(", ")} ${under.length === 1 ? "is" : "are"} under --min-pass ${minPass * 100}%`);
  return 1;
}

function readSystemFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new OperatorError(
      `--system-file ${file}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}`,
    );
  }
}

await runCli("eval cannot run:", () => main(process.argv.slice(2)));
