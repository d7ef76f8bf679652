import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { testDatabaseKind } from "../support/helpers/test-database.js";
import { startLoopdHoldingSecrets, SWEEP_COMMAND, type LoopdHoldingSecrets } from "./loopd-holding-secrets.js";
import { repoRoot } from "./run-program.js";

// A real process, compiling the sources at start: slow on a busy machine, so bounds, not measures, are generous.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 150_000 });

/*
 * loopd as a real process holding secrets in its environment (a provider
 * key, the admin token and, on Postgres, DATABASE_URL): an approved
 * run_command and a stdio MCP server each read every /proc/*\/environ and
 * /proc/*\/cmdline they can, and none of the secrets is among what they
 * read. The sandbox is the one loopd chooses itself (bubblewrap, which CI
 * installs).
 */

let held: LoopdHoldingSecrets;
let workspaceDir: string;
let serverDir: string;

beforeAll(async () => {
  workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-sandbox-ws-"));
  serverDir = mkdtempSync(path.join(tmpdir(), "loopd-sandbox-mcp-"));
  // The server runs as TOOL_RUN_AS_USER when the tests run as root, and writes its sweep here.
  chmodSync(serverDir, 0o777);
  const toolsFile = path.join(serverDir, "tools.json");
  const server = {
    name: "sweep",
    command: process.execPath,
    args: [path.join(repoRoot, "test/support/mcp/proc-sweep-server.mjs")],
    cwd: serverDir,
    env: { SWEEP_FILE: "sweep.txt", SWEEP_MARK: "visible" },
  };
  writeFileSync(toolsFile, JSON.stringify({ mcp: [server] }));
  held = await startLoopdHoldingSecrets({
    prefix: "loopd-sandbox-db-",
    env: { ENABLE_RUN_COMMAND: "true", TOOLS_FILE: toolsFile, WORKSPACE_DIR: workspaceDir },
  });
  await vi.waitFor(
    async () =>
      expect(
        ((await (await fetch(`${held.loopd.url}/tools/servers`)).json()) as { data: unknown[] }).data[0],
      ).toMatchObject({ name: "sweep", status: "ready" }),
    { timeout: 60_000, interval: 200 },
  );
});

afterAll(async () => {
  await held?.close();
  for (const dir of [workspaceDir, serverDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => held.llm.reset());

describe(`a tool cannot read loopd's secrets through /proc (${testDatabaseKind})`, () => {
  test("an approved run_command reading every /proc/*/environ and cmdline it can finds none of them", async () => {
    const { client, llm } = held;
    const conv = await client.createConversation({ tools: ["run_command"] });
    llm.script({ toolCalls: [{ name: "run_command", input: { command: SWEEP_COMMAND } }] }, { text: "Done." });
    const paused = (await client.send(conv.id, "Look around.")).run;
    expect(paused).toMatchObject({ status: "requires_action" });
    const ended = await client.answer(conv.id, paused.id, {
      approvals: [{ tool_call_id: paused.required_action.tool_calls[0].tool_call_id, approve: true }],
    });
    expect(ended.run ?? ended).toMatchObject({ status: "completed" });
    const swept = readFileSync(path.join(workspaceDir, "sweep.txt"), "utf8");
    // It did read: its own environment is there.
    expect(swept).toMatch(/^PATH=/m);
    for (const secret of held.secrets()) expect(swept).not.toContain(secret);
  });

  test("a stdio MCP server reading every /proc/*/environ and cmdline it can (its parent's too) finds none of them", async () => {
    const { client, llm } = held;
    const conv = await client.createConversation({ tools: ["sweep__sweep_proc"] });
    llm.script({ toolCalls: [{ name: "sweep__sweep_proc", input: {} }] }, { text: "Done." });
    expect((await client.send(conv.id, "Look around.")).run).toMatchObject({ status: "completed" });
    const results = (await client.messages(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0]);
    expect(results[0]).toMatchObject({ is_error: false, content: expect.stringMatching(/^read \d+ files$/) });
    const swept = readFileSync(path.join(serverDir, "sweep.txt"), "utf8");
    expect(swept).toMatch(/^SWEEP_MARK=visible$/m);
    for (const secret of held.secrets()) expect(swept).not.toContain(secret);
  });
});
