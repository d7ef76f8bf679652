/**
 * run_command: off unless ENABLE_RUN_COMMAND, every call approved by a
 * person, its process group killed whole, its environment without secrets.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, test, vi } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { api } from "../../support/helpers/api.js";
import { processesWith } from "../../support/helpers/processes-with.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const f = useLoopd({
  env: {
    ENABLE_RUN_COMMAND: "true",
    RUN_COMMAND_ENV: "LOOPD_TEST_VISIBLE, OPENAI_API_KEY, DATABASE_URL, MY_TOKEN",
    LOOPD_TEST_VISIBLE: "yes",
    OPENAI_API_KEY: "test-openai-key-not-for-commands",
    DATABASE_URL: "postgres://loopd:db-password@127.0.0.1:5432/nowhere",
    MY_TOKEN: "token-not-for-commands",
    TOOL_TIMEOUT_MS: "20000",
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/tmp",
  },
});
const client = () => api(f.loopd.app);

/** The model asks for `command`; the run pauses for approval; it is approved (or not); the result of the call and the run. */
async function runCommand(input: Record<string, unknown>, { approve = true } = {}) {
  const conv = await client().createConversation({ provider: "openai", tools: ["run_command"] });
  f.llm.script({ toolCalls: [{ name: "run_command", input }] }, { text: "Done." });
  const paused = (await client().send(conv.id, { content: "Run it." })).json().run;
  expect(paused).toMatchObject({
    status: "requires_action",
    required_action: { tool_calls: [{ name: "run_command", action: "approve" }] },
  });
  const answered = await f.loopd.app.inject({
    method: "POST",
    url: `/conversations/${conv.id}/runs/${paused.id}/actions`,
    payload: { approvals: [{ tool_call_id: paused.required_action.tool_calls[0].tool_call_id, approve }] },
  });
  const approvedAt = Date.now();
  expect(answered.statusCode, answered.body).toBe(200);
  const run = await vi.waitFor(
    async () => {
      const now = (
        await f.loopd.app.inject({ method: "GET", url: `/conversations/${conv.id}/runs/${paused.id}` })
      ).json();
      expect(now.status).not.toBe("running");
      return now;
    },
    { timeout: 30_000, interval: 50 },
  );
  const result = (await client().history(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0])[0];
  return { run, result, output: result.is_error ? null : JSON.parse(result.content), tookMs: Date.now() - approvedAt };
}

describe("run_command", () => {
  test("waits for approval even when the conversation lists no approvals; denied, it never runs", async () => {
    const marker = path.join(f.loopd.config.tools.workspaceDir, "denied.txt");
    const { result } = await runCommand({ command: `echo ran > ${marker}` }, { approve: false });
    expect(result).toMatchObject({ is_error: true, content: expect.stringMatching(/declined/) });
    expect(() => readFileSync(marker)).toThrow(/ENOENT/);
  });

  test("approved, it runs in the workspace: exit code, stdout and stderr", async () => {
    const { run, output } = await runCommand({ command: "pwd; echo out; echo err >&2; exit 3" });
    expect(run.status).toBe("completed");
    expect(output).toEqual({
      exit_code: 3,
      stdout: `${f.loopd.config.tools.workspaceDir}\nout\n`,
      stderr: "err\n",
      timed_out: false,
    });
  });

  test("its environment is PATH, HOME, LANG and what RUN_COMMAND_ENV lists, never a key, a token or the database's URL", async () => {
    const { output } = await runCommand({ command: "env" });
    const names = (output.stdout as string)
      .trim()
      .split("\n")
      .map((line) => line.split("=")[0]);
    expect(names).toContain("LOOPD_TEST_VISIBLE");
    expect(names).toEqual(expect.arrayContaining(["PATH", "HOME"]));
    expect(output.stdout).not.toMatch(/test-openai-key|db-password|token-not-for-commands/);
    for (const name of ["OPENAI_API_KEY", "DATABASE_URL", "MY_TOKEN"]) expect(names).not.toContain(name);
  });

  test("at its timeout the whole process group is killed, what it left in the background too", async () => {
    const token = `bg-${randomUUID()}`;
    const { output } = await runCommand({
      command: `sh -c 'sleep 60; : ${token}' & echo started; sleep 60`,
      timeout_s: 1,
    });
    expect(output).toMatchObject({ timed_out: true, stdout: "started\n" });
    await vi.waitFor(() => expect(processesWith(token)).toEqual([]), { timeout: 5_000, interval: 50 });
  });

  test("a setsid'ed child neither outlives the timeout nor holds the result past it: it comes at the deadline with the output so far", async () => {
    const token = `setsid-${randomUUID()}`;
    const { output, tookMs } = await runCommand({
      command: `setsid sh -c 'sleep 301; : ${token}' & echo started; echo said >&2; sleep 60`,
      timeout_s: 3,
    });
    expect(output).toEqual({ exit_code: null, stdout: "started\n", stderr: "said\n", timed_out: true });
    // 3 s, a moment to gather, and the run's next model call: far from the tool's own limit (TOOL_TIMEOUT_MS, 20 s here).
    expect(tookMs).toBeLessThan(8_000);
    await vi.waitFor(() => expect(processesWith(token)).toEqual([]), { timeout: 5_000, interval: 50 });
  });

  test("a long output keeps its head and tail and says how many bytes it left out", async () => {
    const { output } = await runCommand({
      command: "echo BEGIN; head -c 200000 /dev/zero | tr '\\0' a; echo; echo END",
    });
    expect(output.stdout).toMatch(/^BEGIN\naaa/);
    expect(output.stdout).toMatch(/\[… \d+ bytes left out …\]/);
    expect(output.stdout).toMatch(/a\nEND\n$/);
    expect(output.stdout.length).toBeLessThan(20_000);
  });

  test("GET /tools shows it last among the built-ins, approval always; a conversation gets it only by naming it", async () => {
    const tools = (await f.loopd.app.inject({ method: "GET", url: "/tools" })).json().data;
    expect(tools.at(-1)).toMatchObject({
      name: "run_command",
      source: "command",
      approval: "always",
      read_only: false,
    });
    expect((await client().createConversation({})).tools).not.toContain("run_command");
  });

  test("without ENABLE_RUN_COMMAND it is not there", () => {
    expect(loadConfig({}).tools.runCommand).toBeNull();
    expect(() => loadConfig({ RUN_COMMAND_ENV: "NOT A NAME" })).toThrow(/RUN_COMMAND_ENV: must be variable names/);
  });
});
