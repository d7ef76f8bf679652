import { randomUUID } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server.js";
import { testDatabaseKind } from "../helpers/test-database.js";
import { loopdClient } from "./loopd-client.js";
import { killAllLoopd, spawnLoopd, type LoopdProcess } from "./loopd-process.js";
import { createProcessDatabase } from "./process-database.js";
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

const secrets = { OPENAI_API_KEY: `sk-test-${randomUUID()}`, ADMIN_TOKEN: `admin-${randomUUID()}`, LOOPD_TEST_SECRET: `secret-${randomUUID()}` };
let llm: FakeLlm;
let database: Awaited<ReturnType<typeof createProcessDatabase>>;
let workspaceDir: string;
let serverDir: string;
let loopd: LoopdProcess;
const client = loopdClient(() => loopd.url);

beforeAll(async () => {
  llm = await startFakeLlm();
  database = await createProcessDatabase("loopd-sandbox-db-");
  workspaceDir = mkdtempSync(path.join(tmpdir(), "loopd-sandbox-ws-"));
  serverDir = mkdtempSync(path.join(tmpdir(), "loopd-sandbox-mcp-"));
  // The server runs as TOOL_RUN_AS_USER when the tests run as root, and writes its sweep here.
  chmodSync(serverDir, 0o777);
  const toolsFile = path.join(serverDir, "tools.json");
  const server = { name: "sweep", command: process.execPath, args: [path.join(repoRoot, "test/mcp/proc-sweep-server.mjs")], cwd: serverDir, env: { SWEEP_FILE: "sweep.txt", SWEEP_MARK: "visible" } };
  writeFileSync(toolsFile, JSON.stringify({ mcp: [server] }));
  loopd = await spawnLoopd({
    env: {
      ...database.env,
      ...secrets,
      OPENAI_BASE_URL: `${llm.url}/v1`,
      LLM_PROVIDER: "openai",
      ENABLE_RUN_COMMAND: "true",
      TOOLS_FILE: toolsFile,
      WORKSPACE_DIR: workspaceDir,
      LOG_LEVEL: "warn",
    },
  });
  await vi.waitFor(async () => expect(((await (await fetch(`${loopd.url}/tools/servers`)).json()) as { data: unknown[] }).data[0]).toMatchObject({ name: "sweep", status: "ready" }), { timeout: 60_000, interval: 200 });
});

afterAll(async () => {
  await killAllLoopd();
  await llm?.close();
  await database?.drop();
  for (const dir of [workspaceDir, serverDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => llm.reset());

/** Every secret loopd holds in its environment. */
const secretValues = () => [...Object.values(secrets), ...(database.env.DATABASE_URL ? [database.env.DATABASE_URL] : [])];

describe(`a tool cannot read loopd's secrets through /proc (${testDatabaseKind})`, () => {
  test("an approved run_command reading every /proc/*/environ and cmdline it can finds none of them", async () => {
    const conv = await client.createConversation({ tools: ["run_command"] });
    const command = "for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do echo \"== $f\"; tr '\\0' '\\n' < \"$f\"; done > sweep.txt 2>/dev/null; echo swept";
    llm.script({ toolCalls: [{ name: "run_command", input: { command } }] }, { text: "Done." });
    const paused = (await client.send(conv.id, "Look around.")).run;
    expect(paused).toMatchObject({ status: "requires_action" });
    const ended = await client.answer(conv.id, paused.id, { approvals: [{ tool_call_id: paused.required_action.tool_calls[0].tool_call_id, approve: true }] });
    expect(ended.run ?? ended).toMatchObject({ status: "completed" });
    const swept = readFileSync(path.join(workspaceDir, "sweep.txt"), "utf8");
    // It did read: its own environment is there.
    expect(swept).toMatch(/^PATH=/m);
    for (const secret of secretValues()) expect(swept).not.toContain(secret);
  });

  test("a stdio MCP server reading every /proc/*/environ and cmdline it can (its parent's too) finds none of them", async () => {
    const conv = await client.createConversation({ tools: ["sweep__sweep_proc"] });
    llm.script({ toolCalls: [{ name: "sweep__sweep_proc", input: {} }] }, { text: "Done." });
    expect((await client.send(conv.id, "Look around.")).run).toMatchObject({ status: "completed" });
    const results = (await client.messages(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0]);
    expect(results[0]).toMatchObject({ is_error: false, content: expect.stringMatching(/^read \d+ files$/) });
    const swept = readFileSync(path.join(serverDir, "sweep.txt"), "utf8");
    expect(swept).toMatch(/^SWEEP_MARK=visible$/m);
    for (const secret of secretValues()) expect(swept).not.toContain(secret);
  });
});
