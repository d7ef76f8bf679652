import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import type { EvalCase } from "../../src/evals/eval-case.js";
import type { FakeTurn, RecordedRequest } from "../support/fake-llm/server.js";
import { api } from "../support/helpers/api.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { systemIn } from "../support/helpers/wire.js";
import { runProgram } from "../e2e/run-program.js";
import { evalTools } from "../evals/eval-fixtures.js";
import { openDatabase } from "../../src/store/db.js";
import { createStore } from "../../src/store/store.js";

/**
 * `npm run eval -- <cases> --agent a@1 --agent a@2`: the agents read from the
 * service's database (DATABASE_URL on Postgres; on PGlite, through the API of
 * the server that holds DATA_DIR), the cases run as each version on the
 * fake LLM, compared side by side.
 */
const f = useLoopd({ tools: evalTools(), listen: true });

/** Version 1 calls the tool then answers; version 2's prompt makes the model answer at once (the case fails). */
const respond = (req: RecordedRequest): FakeTurn => {
  if (systemIn(req).includes("Never use tools")) return { text: "No idea." };
  const made = (req.body.messages as { role: string }[]).filter((m) => m.role === "assistant").length;
  return made === 0 ? { toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] } : { text: "It is 42." };
};

async function evalCommand(args: string[], { database }: { database?: Record<string, string> } = {}) {
  const cwd = mkdtempSync(path.join(tmpdir(), "loopd-eval-agents-"));
  const env: Record<string, string> = {
    ANTHROPIC_BASE_URL: f.llm.url,
    OPENAI_BASE_URL: `${f.llm.url}/v1`,
    ANTHROPIC_API_KEY: "test-anthropic-key",
    OPENAI_API_KEY: "test-openai-key",
    ...(database ?? (f.testDb.url ? { DATABASE_URL: f.testDb.url } : { DATA_DIR: f.testDb.dataDir! })),
  };
  const run = await runProgram("src/cli/eval.ts", { args, cwd, env });
  const reports = readdirSync(cwd).includes("reports") ? readdirSync(path.join(cwd, "reports")) : [];
  const report = reports.length === 1 ? JSON.parse(readFileSync(path.join(cwd, "reports", reports[0]!), "utf8")) : null;
  return { ...run, report };
}

beforeAll(() => {
  // On PGlite the server holds DATA_DIR, as `npm start` does: the command reads the agents through its API.
  if (!f.testDb.url) f.database.advertise(f.loopd.url!);
});

describe.each(["anthropic", "openai"] as const)("eval --agent on %s", (provider) => {
  const name = `support-${provider}`;
  let caseFile = "";
  let evalCase: EvalCase;

  beforeAll(async () => {
    const client = api(f.loopd.app);
    const created = await f.loopd.app.inject({
      method: "POST",
      url: "/agents",
      payload: { name, provider, system: "You are support. Use the calculator.", tools: ["calculate"] },
    });
    expect(created.statusCode).toBe(201);
    const changed = await f.loopd.app.inject({
      method: "PATCH",
      url: `/agents/${name}`,
      payload: { version: 1, system: "You are support. Never use tools." },
    });
    expect(changed.json().version).toBe(2);
    const conv = await client.createConversation({ agent: { name, version: 1 }, title: `sum on ${provider}` });
    f.llm.respond = respond;
    const sent = (await client.send(conv.id, { content: "What is 6*7?" })).json();
    expect(sent.run.status).toBe("completed");
    const res = await f.loopd.app.inject({
      method: "GET",
      url: `/conversations/${conv.id}/runs/${sent.run.id}/eval-case`,
    });
    evalCase = res.json();
    caseFile = path.join(mkdtempSync(path.join(tmpdir(), "loopd-agent-case-")), "sum.json");
    writeFileSync(caseFile, JSON.stringify(evalCase));
  });

  test("a case made from a run of an agent's conversation carries the agent's version", () => {
    expect(evalCase.agent).toEqual({ name, version: 1 });
    expect(evalCase.expect.tool_calls).toEqual(["calculate"]);
  });

  test("two versions side by side: pass rate, tokens, cost, steps, latency p50, the case that changed verdict; exit 1", async () => {
    f.llm.reset();
    f.llm.respond = respond;
    const run = await evalCommand([caseFile, "--agent", `${name}@1`, "--agent", `${name}@2`]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`eval of 1 case from ${caseFile} as ${name}@1, ${name}@2,`);
    expect(run.stdout).toMatch(new RegExp(`^ +${name}@1 +${name}@2$`, "m"));
    expect(run.stdout).toMatch(/^pass rate +1\/1 \(100\.0%\) +0\/1 \(0\.0%\)$/m);
    expect(run.stdout).toMatch(/^tokens +\d+ +\d+$/m);
    expect(run.stdout).toMatch(/^cost +\$\d\.\d{4} +\$\d\.\d{4}$/m);
    expect(run.stdout).toMatch(/^steps +2 +1$/m);
    expect(run.stdout).toMatch(/^latency p50 +\d+ ms +\d+ ms$/m);
    expect(run.stdout).toContain(`1 case changed verdict (${name}@1 → ${name}@2):\n  sum on ${provider} — `);
    expect(run.stdout).toMatch(/: PASS → FAIL\n/);
    // Each case's row names the version it ran as, before what failed.
    expect(run.stdout).toMatch(new RegExp(`^PASS +2 .* — run_\\w+  \\(${name}@1\\)$`, "m"));
    expect(run.stdout).toMatch(new RegExp(`^FAIL +1 .* — run_\\w+  \\(${name}@2\\)\\n {6}tool_calls: expected`, "m"));
    expect(run.stderr).toBe(`${name}@2's pass rate 0.0% is under --min-pass 100%\n`);
    // Each version ran with its own configuration: its system prompt reached the model.
    const systems = f.llm.requests.map(systemIn);
    expect(systems.filter((s) => s.includes("Use the calculator"))).toHaveLength(2);
    expect(systems.filter((s) => s.includes("Never use tools"))).toHaveLength(1);
    expect(run.report).toMatchObject({
      passed: false,
      min_pass: 1,
      agents: [
        { label: `${name}@1`, agent: { name, version: 1 }, passed: true, summary: { cases: 1, passed: 1, steps: 2 } },
        { label: `${name}@2`, agent: { name, version: 2 }, passed: false, summary: { cases: 1, passed: 0, steps: 1 } },
      ],
      changed: [{ name: evalCase.name, verdicts: { [`${name}@1`]: "pass", [`${name}@2`]: "fail" } }],
    });
    expect(run.report.agents[1].cases[0].failures[0]).toMatch(/^tool_calls: expected \[calculate\], got \[\]/);
  }, 120_000);

  test("--min-pass applies to every column: a bare name is the latest version; at or over it, exit 0", async () => {
    f.llm.respond = respond;
    const run = await evalCommand([caseFile, "--agent", `${name}@1`, "--agent", name, "--min-pass", "0"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.report.agents.map((c: { label: string }) => c.label)).toEqual([`${name}@1`, `${name}@2`]);
  }, 120_000);

  // Reading and checking --agent is the same whatever the provider: once is enough (each spawns the command, seconds apiece).
  if (provider !== "anthropic") return;

  test("an --agent that is not name@version, an unknown agent, an unknown version, a version named twice: one line, exit 2", async () => {
    const syntax = await evalCommand([caseFile, "--agent", "Support@x"]);
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toBe(
      '--agent "Support@x" is not name or name@version (a name is 1–48 of a-z, 0-9, _ and -; a version a whole number from 1)\n',
    );
    const unknown = await evalCommand([caseFile, "--agent", "nobody"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^--agent nobody: agent nobody does not exist in .+\n$/);
    const version = await evalCommand([caseFile, "--agent", `${name}@9`]);
    expect(version.code).toBe(2);
    expect(version.stderr).toBe(`--agent ${name}@9: agent ${name} has no version 9 (its latest is 2)\n`);
    const twice = await evalCommand([caseFile, "--agent", `${name}@2`, "--agent", name]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toBe(
      `--agent: ${name}@2 is named twice (a bare name is its latest version): each column is another version\n`,
    );
    expect([syntax, unknown, version, twice].map((r) => r.report)).toEqual([null, null, null, null]);
  }, 120_000);

  test("an embedded database nobody holds (DATA_DIR) is opened and read directly", async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), "loopd-eval-agents-data-"));
    const database = await openDatabase({ dataDir });
    await database.migrate();
    await createStore(database).agents.create({
      tenant: "default",
      name,
      description: null,
      configuration: { provider, system: "You are support. Use the calculator.", tools: ["calculate"] },
    });
    await database.close();
    const missing = await evalCommand([caseFile, "--agent", `${name}@2`], { database: { DATA_DIR: dataDir } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`--agent ${name}@2: agent ${name} has no version 2 (its latest is 1)\n`);
    f.llm.respond = respond;
    const run = await evalCommand([caseFile, "--agent", name], { database: { DATA_DIR: dataDir } });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.report.agents).toMatchObject([{ label: `${name}@1`, passed: true }]);
    rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);
});
