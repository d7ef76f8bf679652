import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createServer } from "node:http";
import { describe, expect, test } from "vitest";
import { runOverHttp } from "../../src/replay/run-over-http.js";
import { writeOutputFile } from "../../src/cli/write-output-file.js";
import { openDatabase } from "../../src/store/db.js";
import { storedTraceEntries } from "../../src/runs/trace/read-trace.js";
import { redactorOf } from "../../src/util/redact.js";
import { replayRun } from "../../src/replay/replay-run.js";
import { api } from "../support/helpers/api.js";
import { startLoopd } from "../support/helpers/start-loopd.js";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { runProgram } from "../e2e/run-program.js";

const f = useLoopd({ listen: true });
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

const replay = (
  run: Awaited<ReturnType<typeof recordedRun>>["run"],
  options: { provider?: "anthropic" | "openai"; model?: string } = {},
) =>
  replayRun({
    entries: storedTraceEntries({
      store: f.loopd.services.store,
      run,
      tenant: "default",
      redactor: redactorOf(f.loopd.config),
    }),
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
    expect(report.steps.map((s) => s.verdict)).toEqual([
      "different_input",
      "different_tool",
      "text_instead_of_call",
      "call_instead_of_text",
    ]);
    expect(report.steps[0]).toMatchObject({
      recorded: { tool_calls: [{ input: { timezone: "Asia/Tokyo" } }] },
      replayed: { tool_calls: [{ input: { timezone: "Europe/Paris" } }] },
    });
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

test("npm run replay prints each step, writes its report without overwriting an earlier one, and exits 1 when a call failed", async () => {
  const folder = mkdtempSync(path.join(tmpdir(), "loopd-replay-"));
  const dataDir = path.join(folder, "data");
  const database = await openDatabase({ dataDir });
  await database.migrate();
  const loopd = await startLoopd({ database, llm: f.llm });
  const conv = await api(loopd.app).createConversation({ provider: "openai" });
  f.llm.script(RECORDED[1]!, { text: "42." });
  const runId = (await api(loopd.app).send(conv.id, { content: "6*7?" })).json().run.id;
  await loopd.close();
  await database.close();

  const replay = (...args: string[]) =>
    runProgram("src/cli/replay.ts", {
      args: [runId, "--base-url", `${f.llm.url}/v1`, ...args],
      cwd: folder,
      env: { DATA_DIR: dataDir, OPENAI_API_KEY: "test-openai-key" },
    });
  f.llm.reset();
  f.llm.script(RECORDED[1]!, { text: "Forty-two." });
  const first = await replay();
  expect(first.code).toBe(0);
  expect(first.stdout).toMatch(/step +1 +same_call +calculate\(\{"expression":"6\*7"\}\)/);
  expect(first.stdout).toMatch(/step +2 +different_text/);
  const report = path.join(folder, "reports", `replay-${runId}.json`);
  expect(first.stdout).toContain(`report: ${report}\n`);
  expect(JSON.parse(readFileSync(report, "utf8"))).toMatchObject({
    run_id: runId,
    summary: { same_call: 1, different_text: 1 },
    base_url: `${f.llm.url}/v1`,
  });

  // The second replay of the run gets a file of its own; the model now fails its second call.
  f.llm.script(RECORDED[1]!, { status: 400, message: "this model is gone" });
  const second = await replay();
  expect(second.code).toBe(1);
  expect(second.stdout).toMatch(/step +2 +error +this model is gone/);
  expect(second.stderr).toBe("1 of 2 replayed calls failed\n");
  expect(second.stdout).toContain(`report: ${path.join(folder, "reports", `replay-${runId}-2.json`)}\n`);
  expect(JSON.parse(readFileSync(report, "utf8"))).toMatchObject({ summary: { same_call: 1, different_text: 1 } });

  // --out names the file: replacing one there is said; an option that does not apply is said too.
  f.llm.script(RECORDED[1]!, { text: "42." });
  const named = await replay("--out", report, "--provider", "mock");
  expect(named.code).toBe(0);
  expect(named.stdout).toContain(
    "note: --base-url does not apply to the mock provider (it runs in this process); ignored\n",
  );
  expect(named.stdout).toContain(`report: ${report} (replaced the earlier file: --out names it)\n`);
  expect(JSON.parse(readFileSync(report, "utf8"))).toMatchObject({ replayed: { provider: "mock" }, base_url: null });
}, 150_000);

describe("reading a run through a server's API", () => {
  test("GET /runs/:run_id answers the run by its id alone; an unknown one is the contract's 404", async () => {
    const { run } = await recordedRun("openai");
    const res = await f.loopd.app.inject({ method: "GET", url: `/runs/${run.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: run.id,
      conversation_id: run.conversationId,
      status: "completed",
      steps: 4,
    });
    const missing = await f.loopd.app.inject({ method: "GET", url: "/runs/run_nope" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({
      error: { code: "not_found", message: "run run_nope does not exist", details: {} },
    });
  });

  test("the requests rebuilt from the API are the ones rebuilt from the store, an earlier refused turn left out of both", async () => {
    const conv = await client().createConversation({ provider: "anthropic" });
    f.llm.script({ text: "No.", stop: "refusal" });
    await client().send(conv.id, { content: "Something it refuses." });
    f.llm.script(...RECORDED);
    const runId = (await client().send(conv.id, { content: "Time in Tokyo, 6*7 and 2^10?" })).json().run.id;
    const run = (await f.loopd.services.store.runs.get(runId))!;
    const fromStore = [];
    for await (const e of storedTraceEntries({
      store: f.loopd.services.store,
      run,
      tenant: "default",
      redactor: redactorOf(f.loopd.config),
    }))
      fromStore.push(e.request);
    const fromApi = [];
    for await (const e of (await runOverHttp({ url: f.loopd.url, runId })).entries) fromApi.push(e.request);
    expect(fromApi.filter(Boolean)).toHaveLength(4);
    expect(fromApi).toEqual(fromStore);
    expect(JSON.stringify(fromApi)).not.toContain("Something it refuses.");
  });

  test("what a server answers is checked before it is used: another run, more calls than steps, a URL that is not one", async () => {
    const { run } = await recordedRun("openai");
    let answer: Record<string, unknown> = {
      id: "run_other",
      conversation_id: run.conversationId,
      steps: 1,
      provider: "openai",
      model: "m",
    };
    let spans: string[] = [];
    const server = createServer((req, res) => {
      if (req.url?.startsWith("/base/runs/")) return res.end(JSON.stringify(answer));
      if (req.url?.includes("/trace")) return res.end(spans.join("\n"));
      res.statusCode = 404;
      res.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/base`;
    try {
      await expect(runOverHttp({ url, runId: run.id })).rejects.toThrow(`answered for another run than ${run.id}`);
      await expect(runOverHttp({ url, runId: "../../etc" })).rejects.toThrow('"../../etc" is not a run id');
      answer = { ...answer, id: run.id };
      spans = [
        JSON.stringify({ type: "run" }),
        ...Array.from({ length: 5 }, (_, i) => JSON.stringify({ seq: i + 1, type: "model.call", request: {} })),
      ];
      const { entries } = await runOverHttp({ url, runId: run.id });
      await expect(
        (async () => {
          for await (const _ of entries) void _;
        })(),
      ).rejects.toThrow("sent more model calls");
      await expect(runOverHttp({ url: "loopd:3000", runId: run.id })).rejects.toThrow(
        '--url "loopd:3000" is not an http(s) URL',
      );
      await expect(runOverHttp({ url: "nope", runId: run.id })).rejects.toThrow('--url "nope" is not a URL');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test("a report's name is made of what it was given, never a path out of its folder", () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "loopd-report-"));
    const { file } = writeOutputFile({ name: "replay-x/../../../escaped", extension: "json", text: "{}", cwd });
    expect(path.dirname(file)).toBe(path.join(cwd, "reports"));
    expect(path.basename(file)).toBe("replay-x_.._.._.._escaped.json");
  });
});
