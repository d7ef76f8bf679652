import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, expect, test } from "vitest";
import type { EvalCase } from "../../src/evals/eval-case.js";
import type { FakeTurn } from "../support/fake-llm/server.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { runProgram } from "../e2e/run-program.js";
import { evalTools, recordCase, respondByCase } from "../evals/eval-fixtures.js";

const f = useLoopd({ tools: evalTools() });

const ASK = { anthropic: "Order A-17 on anthropic?", openai: "Order A-17 on openai?" };
/** The tool is a built-in: the eval's process knows only those (and `TOOLS_FILE`'s). */
const turnsOf = (provider: "anthropic" | "openai"): FakeTurn[] => [
  { toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] },
  { text: `Shipped (${provider}).` },
];

let cases = "";
const caseFiles: Record<string, string> = {};

beforeAll(async () => {
  cases = mkdtempSync(path.join(tmpdir(), "loopd-eval-cases-"));
  for (const provider of ["anthropic", "openai"] as const) {
    const { evalCase } = await recordCase(f, {
      provider,
      content: ASK[provider],
      turns: turnsOf(provider),
      settings: { tools: ["calculate"] },
    });
    caseFiles[provider] = path.join(cases, `${provider}.json`);
    writeFileSync(caseFiles[provider], JSON.stringify({ ...evalCase, name: `order on ${provider}` }, null, 2));
  }
});

/** `npm run eval` in a folder of its own, on the fake LLM (both providers keyed unless `keys` says otherwise). */
async function evalCommand(args: string[], { keys = ["anthropic", "openai"] }: { keys?: string[] } = {}) {
  const cwd = mkdtempSync(path.join(tmpdir(), "loopd-eval-"));
  const env: Record<string, string> = {
    ANTHROPIC_BASE_URL: f.llm.url,
    OPENAI_BASE_URL: `${f.llm.url}/v1`,
    ...(keys.includes("anthropic") && { ANTHROPIC_API_KEY: "test-anthropic-key" }),
    ...(keys.includes("openai") && { OPENAI_API_KEY: "test-openai-key" }),
    // The service's database: the eval must not touch it.
    DATA_DIR: path.join(cwd, "data"),
    ...(f.testDb.url && { DATABASE_URL: f.testDb.url }),
  };
  const before = await rowCounts(f.database);
  const run = await runProgram("src/cli/eval.ts", { args, cwd, env });
  expect(existsSync(path.join(cwd, "data"))).toBe(false);
  expect(await rowCounts(f.database)).toEqual(before);
  const reports = existsSync(path.join(cwd, "reports")) ? readdirSync(path.join(cwd, "reports")) : [];
  return {
    ...run,
    cwd,
    report: reports.length === 1 ? JSON.parse(readFileSync(path.join(cwd, "reports", reports[0]!), "utf8")) : null,
    reports,
  };
}

test("a folder of cases: a row per case, the summary, the JSON report in reports/, exit 0 when all pass", async () => {
  f.llm.respond = respondByCase({ [ASK.anthropic]: turnsOf("anthropic"), [ASK.openai]: turnsOf("openai") });
  const run = await evalCommand([cases]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(
    `eval of 2 cases from ${cases} on each case's own provider and model, tools answered from the recorded results\n`,
  );
  expect(run.stdout).toMatch(/^PASS +2 +\d+ +\$\d+\.\d{4} +\d+ ms +order on anthropic$/m);
  expect(run.stdout).toMatch(/^PASS +2 +\d+ +\$\d+\.\d{4} +\d+ ms +order on openai$/m);
  expect(run.stdout).toContain("pass rate: 2/2 (100.0%)\n");
  expect(run.stdout).toMatch(/^tokens: \d+ in, \d+ out; cost: \$\d+\.\d{4}$/m);
  expect(run.stdout).toMatch(/^latency: \d+ ms in all, \d+ ms a case on average, \d+ ms the longest$/m);
  expect(run.reports).toEqual([expect.stringMatching(/^eval-\d{8}-\d{6}\.json$/)]);
  expect(run.stdout).toContain(`report: ${path.join(run.cwd, "reports", run.reports[0]!)}\n`);
  expect(run.report).toMatchObject({
    target: cases,
    provider: null,
    model: null,
    live_tools: false,
    concurrency: 4,
    min_pass: 1,
    passed: true,
    summary: { cases: 2, passed: 2, failed: 0, pass_rate: 1, unpriced_cases: 0 },
  });
  expect(run.report.cases.map((c: { file: string }) => c.file).sort()).toEqual([caseFiles.anthropic, caseFiles.openai]);
  expect(run.report.cases[0]).toEqual({
    name: expect.any(String),
    file: expect.any(String),
    pass: true,
    failures: [],
    provider: expect.stringMatching(/^(anthropic|openai)$/),
    model: expect.any(String),
    status: "completed",
    stop_reason: "end_turn",
    steps: 2,
    usage: {
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: expect.any(Number),
    },
    latency_ms: expect.any(Number),
    tool_calls: ["calculate"],
    final_text: expect.stringMatching(/^Shipped/),
  });
}, 120_000);

test("a pass rate under --min-pass exits 1 and says so; at or over it, 0", async () => {
  // The openai case's model now answers at once, without the tool.
  f.llm.respond = respondByCase({ [ASK.anthropic]: turnsOf("anthropic"), [ASK.openai]: [{ text: "No idea." }] });
  const strict = await evalCommand([cases, "--concurrency", "1"]);
  expect(strict.code).toBe(1);
  expect(strict.stdout).toMatch(
    /^FAIL +1 .* order on openai\n {6}tool_calls: expected \[calculate\], got \[\]\n {6}final_text: does not contain "Shipped \(openai\)\." \(it is "No idea\."\)$/m,
  );
  expect(strict.stdout).toContain("pass rate: 1/2 (50.0%)\n");
  expect(strict.stderr).toBe("pass rate 50.0% is under --min-pass 100%\n");
  expect(strict.report).toMatchObject({
    passed: false,
    min_pass: 1,
    concurrency: 1,
    summary: { passed: 1, failed: 1, pass_rate: 0.5 },
  });

  const lenient = await evalCommand([cases, "--min-pass", "0.5", "--out", "ci/eval.json"]);
  expect(lenient.code).toBe(0);
  expect(lenient.stderr).toBe("");
  expect(JSON.parse(readFileSync(path.join(lenient.cwd, "ci", "eval.json"), "utf8"))).toMatchObject({
    passed: true,
    min_pass: 0.5,
  });
}, 120_000);

test("a case whose provider has no API key fails with the reason, and only that case", async () => {
  f.llm.respond = respondByCase({ [ASK.anthropic]: turnsOf("anthropic"), [ASK.openai]: turnsOf("openai") });
  const run = await evalCommand([cases, "--min-pass", "0.5"], { keys: ["openai"] });
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(
    /^FAIL +0 +0 +- +0 ms +order on anthropic\n {6}no API key for anthropic: ANTHROPIC_API_KEY is not set$/m,
  );
  expect(run.stdout).toMatch(/^PASS +2 .* order on openai$/m);
  expect(f.llm.requests.every((r) => r.api === "openai")).toBe(true);
}, 120_000);

test("--provider, --model and --system-file apply to every case", async () => {
  const system = path.join(mkdtempSync(path.join(tmpdir(), "loopd-system-")), "system.txt");
  writeFileSync(system, "Answer in one word.");
  f.llm.respond = respondByCase({ [ASK.anthropic]: turnsOf("anthropic") });
  const run = await evalCommand([
    caseFiles.anthropic!,
    "--provider",
    "openai",
    "--model",
    "gpt-other",
    "--system-file",
    system,
  ]);
  // The other model has no price: the case's cost limit cannot be met.
  expect(run.code).toBe(1);
  expect(run.stdout).toContain("on openai/gpt-other");
  expect(f.llm.requests.map((r) => [r.api, r.body.model, r.body.messages[0]])).toEqual([
    ["openai", "gpt-other", { role: "system", content: "Answer in one word." }],
    ["openai", "gpt-other", { role: "system", content: "Answer in one word." }],
  ]);
  expect(run.report).toMatchObject({
    provider: "openai",
    model: "gpt-other",
    system_file: system,
    cases: [{ pass: false, provider: "openai", model: "gpt-other", tool_calls: ["calculate"] }],
  });
  expect(run.report.cases[0].failures).toEqual(["max_cost_usd: the cost is unknown (the model has no price)"]);
  expect(run.stdout).toMatch(/^tokens: \d+ in, \d+ out; cost: \$0\.0000 \(1 case of a model without a price\)$/m);
}, 120_000);

test("malformed cases stop the command before anything runs: the file and the field, exit 1", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "loopd-bad-cases-"));
  mkdirSync(path.join(dir, "sub"));
  const bad = JSON.parse(readFileSync(caseFiles.openai!, "utf8")) as EvalCase;
  writeFileSync(path.join(dir, "sub", "bad.json"), JSON.stringify({ ...bad, expect: { ...bad.expect, max_steps: 0 } }));
  const run = await evalCommand([dir]);
  expect(run.code).toBe(1);
  expect(run.stderr).toBe(
    `eval cannot run: a case is malformed:\n  ${path.join(dir, "sub", "bad.json")}: expect.max_steps: Too small: expected number to be >0\n`,
  );
  expect(run.stdout).toBe("");
  expect(f.llm.requests).toEqual([]);
  expect(run.reports).toEqual([]);
}, 120_000);

test("options out of range are refused with the usage line and what is wrong, exit 2", async () => {
  const run = await evalCommand([cases, "--min-pass", "90", "--concurrency", "0"]);
  expect(run.code).toBe(2);
  expect(run.stderr).toBe(
    "usage: npm run eval -- <case file or folder> [--provider anthropic|openai|mock] [--model m] [--base-url u] [--system-file f] [--out report.json] [--min-pass 0.9] [--live-tools] [--concurrency 4] [--agent name@version …] [--url http://loopd:3000]\n" +
      "--min-pass is a pass rate from 0 to 1\n--concurrency is a whole number of at least 1\n",
  );
  expect(run.reports).toEqual([]);
}, 60_000);
