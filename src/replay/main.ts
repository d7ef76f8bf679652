import { writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { ProviderName } from "../agent/model.js";
import { loadConfig } from "../config.js";
import { createProviders } from "../providers/index.js";
import { openDatabase } from "../store/db.js";
import { createStore } from "../store/store.js";
import { redactorOf } from "../telemetry/redact.js";
import { replayRun, type ReplayStep } from "./replay-run.js";

const USAGE = "usage: npm run replay -- <run_id> [--provider anthropic|openai|mock] [--model m] [--base-url u] [--out report.json]";

/**
 * `npm run replay -- <run_id>`: sends a run's recorded model calls again
 * (see `replayRun`) and prints, step by step, whether the answer is the
 * same; the whole report goes to a JSON file. Reads the database as the
 * server does (`DATABASE_URL`, or the embedded one in `DATA_DIR`, which only
 * one process may open at a time: stop the server first).
 */
async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { provider: { type: "string" }, model: { type: "string" }, "base-url": { type: "string" }, out: { type: "string" } },
  });
  const runId = positionals[0];
  const provider = values.provider as ProviderName | undefined;
  if (!runId || (provider && !["anthropic", "openai", "mock"].includes(provider))) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig(process.env);
  const redactor = redactorOf(config);
  const baseURL = values["base-url"];
  const providers = createProviders(baseURL ? { anthropic: { baseURL }, openai: { baseURL } } : {});
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    await database.migrate();
    const store = createStore(database);
    const run = await store.runs.get(runId);
    if (!run) {
      console.error(`run ${runId} does not exist in this database`);
      return 1;
    }
    console.log(`replaying ${run.id} (${run.provider}/${run.model}, ${run.steps} steps) on ${provider ?? run.provider}/${values.model ?? (provider && provider !== run.provider ? "its default model" : run.model)}`);
    const report = await replayRun({ store, providers, run, redactor, provider, model: values.model, onStep: (step) => console.log(lineOf(step)) });
    const out = path.resolve(values.out ?? `replay-${run.id}.json`);
    writeFileSync(out, `${JSON.stringify({ ...report, replayed_at: new Date().toISOString(), base_url: baseURL ?? null }, null, 2)}\n`);
    console.log(`${Object.entries(report.summary).map(([verdict, n]) => `${verdict}: ${n}`).join(", ") || "no model calls recorded"}`);
    console.log(`report: ${out}`);
    return 0;
  } finally {
    await database.close();
  }
}

function lineOf(step: ReplayStep): string {
  const calls = (s: ReplayStep["recorded"]) =>
    s === null ? "-" : s.tool_calls.length > 0 ? s.tool_calls.map((c) => `${c.name}(${JSON.stringify(c.input)})`).join(", ") : `text ${JSON.stringify(clip(s.text, 60))}`;
  const detail = step.error ? step.error : step.verdict.startsWith("same") ? calls(step.replayed) : `${calls(step.recorded)} → ${calls(step.replayed)}`;
  return `step ${String(step.step).padStart(3)}  ${step.verdict.padEnd(20)}  ${detail}`;
}

const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n)}…`);

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error("replay failed:", err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
