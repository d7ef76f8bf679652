import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { runCli } from "./run-cli.js";
import { loadConfig } from "../config.js";
import { OperatorError } from "../errors.js";
import { PROVIDERS } from "../providers/registry.js";
import { callableWith, MOCK_BASE_URL_NOTE, MODEL_OPTIONS, modelOptionsOf, providersFor } from "./model-options.js";
import { writeOutputFile } from "./write-output-file.js";
import { evalReport } from "../evals/eval-report.js";
import { HEADER, rowOf, summaryLines } from "../evals/eval-summary.js";
import { loadEvalCases } from "../evals/load-eval-cases.js";
import { runEvals } from "../evals/run-evals.js";

const USAGE =
  "usage: npm run eval -- <case file or folder> [--provider anthropic|openai|mock] [--model m] [--base-url u] [--system-file f] [--out report.json] [--min-pass 0.9] [--live-tools] [--concurrency 4]";

/**
 * `npm run eval -- <cases>`: runs eval cases (made with `GET
 * …/runs/:run_id/eval-case`) through the real loop on a throw-away
 * database (see `runEvals`), prints a row per case and a summary, writes the
 * JSON report to `reports/` (or `--out`), and exits 1 when the pass rate is
 * under `--min-pass` (default 1: every case must pass).
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
    },
  });
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
  const { provider, model, baseURL } = options;
  const liveTools = values["live-tools"] === true;
  if (baseURL && provider && PROVIDERS[provider].offline) console.log(MOCK_BASE_URL_NOTE);
  const on = provider
    ? `${provider}/${model ?? "its default model"}`
    : model
      ? `each case's provider, model ${model}`
      : "each case's own provider and model";
  console.log(
    `eval of ${cases.length} case${cases.length === 1 ? "" : "s"} from ${target} on ${on}, ${liveTools ? "running the real tools" : "tools answered from the recorded results"}`,
  );
  console.log(HEADER);
  const startedAt = new Date();
  const { results, summary } = await runEvals({
    cases,
    config,
    providers: providersFor(config, { baseURL }),
    canCall: callableWith(config, { baseURL }),
    liveTools,
    concurrency,
    overrides: { provider, model, system },
    onResult: (result) => console.log(rowOf(result)),
  });
  for (const line of summaryLines(summary)) console.log(line);
  const report = evalReport({
    target,
    startedAt,
    options: { provider, model, baseURL, systemFile: values["system-file"], liveTools, concurrency, minPass },
    summary,
    results,
  });
  const stamp = startedAt.toISOString().replace(/[-:]/g, "").replace(/\..*/, "").replace("T", "-");
  const written = writeOutputFile({
    name: `eval-${stamp}`,
    extension: "json",
    out: values.out,
    text: `${JSON.stringify(report, null, 2)}\n`,
  });
  console.log(`report: ${written.file}${written.replaced ? " (replaced the earlier file: --out names it)" : ""}`);
  if (report.passed) return 0;
  console.error(`pass rate ${(summary.pass_rate * 100).toFixed(1)}% is under --min-pass ${minPass * 100}%`);
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
