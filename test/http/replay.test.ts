import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { openDatabase } from "../../src/store/db.js";
import { storedTraceEntries } from "../../src/telemetry/read-trace.js";
import { redactorOf } from "../../src/telemetry/redact.js";
import { replayRun } from "../../src/replay/replay-run.js";
import { api } from "../helpers/api.js";
import { startLoopd } from "../helpers/start-loopd.js";
import { useLoopd } from "../helpers/use-loopd.js";

const f = useLoopd();
const client = () => api(f.loopd.app);

const RECORDED = [
  { text: "First the time.", toolCalls: [{ name: "get_current_time", input: { timezone: "Asia/Tokyo" } }] },
  { toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] },
  { toolCalls: [{ name: "calculate", input: { expression: "2^10" } }] },
  { text: "It is late in Tokyo; 42 and 1024." },
];

async function recordedRun(provider: "anthropic" | "openai") {
  const conv = await client().createConversation({ provider, system: "Be brief." });
  f.llm.script(...RECORDED);
  const body = (await client().send(conv.id, { content: "Time in Tokyo, 6*7 and 2^10?" })).json();
  expect(body.run).toMatchObject({ status: "completed", steps: 4 });
  const sent = f.llm.requests.map((r) => r.body);
  f.llm.reset();
  return { run: (await f.loopd.services.store.runs.get(body.run.id))!, sent };
}

const replay = (run: Awaited<ReturnType<typeof recordedRun>>["run"], options: { provider?: "anthropic" | "openai"; model?: string } = {}) =>
  replayRun({
    entries: storedTraceEntries({ store: f.loopd.services.store, run, redactor: redactorOf(f.loopd.config) }),
    providers: f.loopd.services.providers,
    run,
    redactor: redactorOf(f.loopd.config),
    ...options,
  });

describe.each(["anthropic", "openai"] as const)("replaying a run recorded on %s", (provider) => {
  test("an unchanged model gives the same answers: every request sent again exactly, no tool run", async () => {
    const { run, sent } = await recordedRun(provider);
    f.llm.script(...RECORDED);
    const report = await replay(run);
    expect(report.steps.map((s) => s.verdict)).toEqual(["same_call", "same_call", "same_call", "same_text"]);
    expect(report.summary).toEqual({ same_call: 3, same_text: 1 });
    expect(f.llm.requests.map((r) => r.body)).toEqual(sent);
    // Nothing was appended: replay never runs a tool nor saves anything.
    expect(await client().history(run.conversationId)).toHaveLength(8);
  });

  test("a changed model: each difference is named", async () => {
    const { run } = await recordedRun(provider);
    f.llm.script(
      { toolCalls: [{ name: "get_current_time", input: { timezone: "Europe/Paris" } }] },
      { toolCalls: [{ name: "get_current_time", input: { timezone: "UTC" } }] },
      { text: "I will not compute that." },
      { toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] },
    );
    const report = await replay(run, { model: "other-model" });
    expect(report.steps.map((s) => s.verdict)).toEqual(["different_input", "different_tool", "text_instead_of_call", "call_instead_of_text"]);
    expect(report.steps[0]).toMatchObject({ recorded: { tool_calls: [{ input: { timezone: "Asia/Tokyo" } }] }, replayed: { tool_calls: [{ input: { timezone: "Europe/Paris" } }] } });
    expect(f.llm.requests.every((r) => r.body.model === "other-model")).toBe(true);
  });
});

test("replay on another provider sends the same calls in that provider's format", async () => {
  const { run } = await recordedRun("anthropic");
  f.llm.script(...RECORDED);
  const report = await replay(run, { provider: "openai" });
  expect(report.replayed.provider).toBe("openai");
  expect(f.llm.requests.map((r) => r.api)).toEqual(["openai", "openai", "openai", "openai"]);
  expect(report.summary).toEqual({ same_call: 3, same_text: 1 });
});

test("npm run replay prints each step and writes the report (the embedded database, as the server leaves it)", async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "loopd-replay-"));
  const database = await openDatabase({ dataDir });
  await database.migrate();
  const loopd = await startLoopd({ database, llm: f.llm });
  const conv = await api(loopd.app).createConversation({ provider: "openai" });
  f.llm.script(RECORDED[1]!, { text: "42." });
  const runId = (await api(loopd.app).send(conv.id, { content: "6*7?" })).json().run.id;
  await loopd.close();
  await database.close();

  f.llm.reset();
  f.llm.script(RECORDED[1]!, { text: "Forty-two." });
  const out = path.join(dataDir, "report.json");
  const { stdout } = await promisify(execFile)(
    "npx",
    ["tsx", "src/replay/main.ts", runId, "--base-url", `${f.llm.url}/v1`, "--out", out],
    { env: { PATH: process.env.PATH!, HOME: process.env.HOME!, DATA_DIR: dataDir, OPENAI_API_KEY: "test-openai-key" }, timeout: 120_000 },
  );
  expect(stdout).toMatch(/step +1 +same_call +calculate\(\{"expression":"6\*7"\}\)/);
  expect(stdout).toMatch(/step +2 +different_text/);
  expect(stdout).toContain(`report: ${out}`);
  expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ run_id: runId, summary: { same_call: 1, different_text: 1 }, base_url: `${f.llm.url}/v1` });
}, 150_000);
