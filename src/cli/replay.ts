import { parseArgs } from "node:util";
import { printable, runCli } from "./run-cli.js";
import { loadConfig } from "../config.js";
import { OperatorError } from "../errors.js";
import { PROVIDERS } from "../providers/registry.js";
import { MODEL_OPTIONS, MOCK_BASE_URL_NOTE, modelOptionsOf, providersFor } from "./model-options.js";
import { holderOf } from "../store/data-dir-lock.js";
import { openDatabase } from "../store/db.js";
import { createStore } from "../store/store.js";
import { INTERNAL } from "../store/conversation-repository.js";
import { storedTraceEntries, type TraceEntry } from "../runs/trace/read-trace.js";
import { redactorOf } from "../util/redact.js";
import { replayRun, type ReplayStep } from "../replay/replay-run.js";
import { runOverHttp } from "../replay/run-over-http.js";
import { writeOutputFile } from "./write-output-file.js";

const USAGE =
  "usage: npm run replay -- <run_id> [--provider anthropic|openai|mock] [--model m] [--base-url u] [--out file.json] [--url http://loopd:3000]";

/**
 * `npm run replay -- <run_id>`: sends a run's recorded model calls again
 * (see `replayRun`) and prints, step by step, whether the answer is the
 * same; the whole report goes to a JSON file in `reports/`. Reads the run
 * from `DATABASE_URL`, or from the embedded database in `DATA_DIR` — through
 * the server's HTTP API when a server holds that folder (`--url` names a
 * server outright). Exits 1 when a step's call failed.
 */
async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...MODEL_OPTIONS, out: { type: "string" }, url: { type: "string" } },
  });
  const runId = positionals[0];
  const options = modelOptionsOf(values);
  if (!runId || positionals.length > 1 || !options) {
    console.error(USAGE);
    return 2;
  }
  const { provider, baseURL } = options;
  const config = loadConfig(process.env);
  const redactor = redactorOf(config);
  const serverUrl = values.url ?? (config.database.url ? undefined : holderOf(config.database.dataDir)?.url);

  let source: {
    run: { id: string; provider: string; model: string; steps: number };
    entries: AsyncIterable<TraceEntry>;
  };
  let close = async () => {};
  if (serverUrl) {
    if (!values.url)
      console.log(`the loopd server at ${serverUrl} holds ${config.database.dataDir}: reading the run through its API`);
    source = await runOverHttp({ url: serverUrl, runId });
  } else {
    const database = await openDatabase({
      databaseUrl: config.database.url,
      directUrl: config.database.directUrl,
      dataDir: config.database.dataDir,
      program: "npm run replay",
      mustExist: true,
    });
    close = () => database.close();
    await database.migrate();
    const store = createStore(database);
    const run = await store.runs.get(runId);
    if (!run) {
      await close();
      throw new OperatorError(
        `run ${runId} does not exist in this database (${config.database.url ? "DATABASE_URL" : config.database.dataDir})`,
      );
    }
    // The run's conversation is there (a run is deleted with it): its attachments are read in its tenant's scope.
    const conversation = await store.conversations.get(INTERNAL, run.conversationId);
    source = { run, entries: storedTraceEntries({ store, run, redactor, tenant: conversation?.tenantId ?? "" }) };
  }
  try {
    const { run } = source;
    const target = provider ?? (run.provider as NonNullable<typeof provider>);
    if (baseURL && PROVIDERS[target].offline) console.log(MOCK_BASE_URL_NOTE);
    const [from, model] = [printable(`${run.provider}/${run.model}`), printable(run.model)];
    console.log(
      `replaying ${run.id} (${from}, ${run.steps} steps) on ${target}/${values.model ?? (target !== run.provider ? "its default model" : model)}`,
    );
    const report = await replayRun({
      entries: source.entries,
      providers: providersFor(config, { baseURL }),
      run,
      redactor,
      provider,
      model: values.model,
      onStep: (step) => console.log(lineOf(step)),
    });
    const written = writeOutputFile({
      name: `replay-${runId}`,
      extension: "json",
      out: values.out,
      text: `${JSON.stringify({ ...report, replayed_at: new Date().toISOString(), base_url: PROVIDERS[target].offline ? null : (baseURL ?? null) }, null, 2)}\n`,
    });
    console.log(
      `${
        Object.entries(report.summary)
          .map(([verdict, n]) => `${verdict}: ${n}`)
          .join(", ") || "no model calls recorded"
      }`,
    );
    console.log(`report: ${written.file}${written.replaced ? " (replaced the earlier file: --out names it)" : ""}`);
    const failed = report.steps.filter((s) => s.verdict === "error").length;
    if (failed > 0) console.error(`${failed} of ${report.steps.length} replayed calls failed`);
    return failed > 0 ? 1 : 0;
  } finally {
    await close();
  }
}

function lineOf(step: ReplayStep): string {
  const calls = (s: ReplayStep["recorded"]) =>
    s === null
      ? "-"
      : s.tool_calls.length > 0
        ? s.tool_calls.map((c) => `${c.name}(${JSON.stringify(c.input)})`).join(", ")
        : `text ${JSON.stringify(clip(s.text, 60))}`;
  const detail = step.error
    ? step.error
    : step.verdict.startsWith("same")
      ? calls(step.replayed)
      : `${calls(step.recorded)} → ${calls(step.replayed)}`;
  return `step ${String(step.step).padStart(3)}  ${step.verdict.padEnd(20)}  ${detail}`;
}

const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n)}…`);

await runCli("replay cannot run:", () => main(process.argv.slice(2)));
