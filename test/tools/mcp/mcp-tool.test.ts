/**
 * Tools from MCP servers (TOOLS_FILE's `mcp`), against real servers written
 * with the official SDK in test/support/mcp: one over stdio (a child process), one
 * over Streamable HTTP on 127.0.0.1, and a few that misbehave.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { api } from "../../support/helpers/api.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";
import { startHttpMcpServer, startSseMcpServer, type HttpMcpServer } from "../../support/mcp/http-mcp-server.js";

const STDIO_SERVER = path.resolve(import.meta.dirname, "../../support/mcp/stdio-server.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "loopd-mcp-"));
// The servers' folder: they run as TOOL_RUN_AS_USER when the tests run as root, and write their records here.
chmodSync(dir, 0o777);
const RECORD_FILE = path.join(dir, "stdio.jsonl");
const TOKEN = "mcp-test-token-0123456789";
/** A secret of loopd's own environment: no MCP child may see it. */
process.env.LOOPD_TEST_SECRET_KEY = "sk-never-for-children";

/** What the stdio servers saw, in order. */
const stdioRecords = (): Record<string, unknown>[] =>
  existsSync(RECORD_FILE)
    ? readFileSync(RECORD_FILE, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

let http: HttpMcpServer;
let sse: HttpMcpServer;
beforeAll(async () => {
  http = await startHttpMcpServer();
  sse = await startSseMcpServer();
});
afterAll(async () => {
  await http.close().catch(() => {});
  await sse.close();
  delete process.env.LOOPD_TEST_SECRET_KEY;
});

function toolsFile(): string {
  const stdio = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    command: process.execPath,
    args: [STDIO_SERVER],
    env: { RECORD_FILE, LOG_LEVEL: "warn" },
    cwd: dir,
    ...extra,
  });
  const file = path.join(dir, "tools.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcp: [
        stdio("t", { timeout_ms: 10_000 }),
        { name: "h", url: http.url, headers: { Authorization: "Bearer ${TEST_MCP_TOKEN}" } },
        stdio("limited", { tools: ["echo", "hang"], timeout_ms: 500, approval: "never" }),
        stdio("noisy", { env: { NOISE: "1" }, tools: ["echo"], approval: "always" }),
        stdio("mute", { env: { HANG_START: "1" } }),
        { name: "broken", command: path.join(dir, "no-such-server") },
        { name: "old", url: sse.url, headers: { Authorization: "Bearer ${TEST_MCP_TOKEN}" }, tools: ["echo"] },
      ],
    }),
  );
  return file;
}

const f = useLoopd(() => ({ env: { TOOLS_FILE: toolsFile(), TEST_MCP_TOKEN: TOKEN } }));
const inject = async (method: "GET" | "POST", url: string, payload?: object) =>
  f.loopd.app.inject({ method, url, ...(payload && { payload }) });
const get = async (url: string) => (await inject("GET", url)).json();
const client = () => api(f.loopd.app);
const serverStatus = async (name: string) =>
  (await get("/tools/servers")).data.find((s: { name: string }) => s.name === name);
const tool = async (name: string) => (await get("/tools")).data.find((t: { name: string }) => t.name === name);

/** The model calls each of `calls` in one step, then answers; the run and its results. */
async function callTools(
  calls: { name: string; input: Record<string, unknown> }[],
  provider: "anthropic" | "openai" = "openai",
  conversation: Record<string, unknown> = {},
) {
  const conv = await client().createConversation({ provider, ...conversation });
  f.llm.script({ toolCalls: calls }, { text: "Done." });
  const res = await client().send(conv.id, { content: "Use the tools." });
  expect(res.statusCode).toBe(200);
  const results = (await client().history(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0]);
  return { run: res.json().run, results, conversationId: conv.id };
}
const callTool = async (
  name: string,
  input: Record<string, unknown> = {},
  provider: "anthropic" | "openai" = "openai",
) => {
  const { run, results } = await callTools([{ name, input }], provider);
  return { run, result: results[0] };
};

beforeAll(async () => {
  await vi.waitFor(
    async () => {
      for (const name of ["t", "h", "limited", "noisy", "old"]) expect((await serverStatus(name)).status).toBe("ready");
    },
    { timeout: 20_000, interval: 50 },
  );
});

describe("servers start in the background and their tools are listed", () => {
  test("GET /tools/servers: each server's transport, status, tool count and restarts; one that cannot start is failed and says why, one that never answers is still starting", async () => {
    const servers = (await get("/tools/servers")).data;
    expect(servers.map((s: { name: string }) => s.name)).toEqual([
      "t",
      "h",
      "limited",
      "noisy",
      "mute",
      "broken",
      "old",
    ]);
    expect(servers[0]).toEqual({
      name: "t",
      transport: "stdio",
      status: "ready",
      tools: 16,
      restarts: 0,
      exit_code: null,
      last_error: null,
    });
    expect(servers[1]).toMatchObject({ name: "h", transport: "http", status: "ready", tools: 16 });
    expect(servers[2]).toMatchObject({ status: "ready", tools: 2 });
    // A line that is not JSON-RPC on its stdout does not stop a server.
    expect(servers[3]).toMatchObject({ status: "ready", tools: 1 });
    expect(servers[4]).toMatchObject({ name: "mute", status: "starting", tools: 0 });
    expect(servers[5]).toMatchObject({
      name: "broken",
      status: "failed",
      tools: 0,
      last_error: expect.stringMatching(
        /^could not be started \(ENOENT\)$|^exited with code 127 \(command not found\)$/,
      ),
    });
    expect(http.requests.map((r) => r.authorization)).toContain(`Bearer ${TOKEN}`);
  });

  test("a server that speaks only the old HTTP+SSE transport is used over SSE, with its headers", async () => {
    expect(await serverStatus("old")).toMatchObject({ transport: "http", status: "ready", tools: 1 });
    expect((await callTool("old__echo", { text: "over SSE" })).result).toMatchObject({
      is_error: false,
      content: "echo: over SSE",
    });
    expect(sse.records).toContainEqual(expect.objectContaining({ type: "call", name: "echo" }));
    expect(new Set(sse.requests.map((r) => r.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));
  });

  test("GET /tools: every page of a server's list, as <server>__<tool>, read-only and approval from the annotations, names cut to 64 with a hash", async () => {
    const tools = (await get("/tools")).data as {
      name: string;
      source: string;
      server: string | null;
      read_only: boolean;
      approval: string;
      status: string;
    }[];
    const of = (server: string) => tools.filter((t) => t.server === server).map((t) => t.name);
    expect(of("t")).toHaveLength(16);
    expect(of("t").slice(0, 4)).toEqual(["t__echo", "t__slow_read", "t__gather", "t__fail"]);
    expect(of("limited")).toEqual(["limited__echo", "limited__hang"]);
    expect(tools.findIndex((t) => t.source === "mcp")).toBeGreaterThan(tools.findIndex((t) => t.name === "calculate"));
    expect(await tool("t__echo")).toMatchObject({
      source: "mcp",
      server: "t",
      read_only: true,
      approval: "never",
      status: "ready",
      input_schema: { type: "object", required: ["text"] },
    });
    expect(await tool("t__write_note")).toMatchObject({ read_only: false, approval: "always" });
    expect(await tool("t__safe_write")).toMatchObject({ read_only: false, approval: "never" });
    expect(await tool("noisy__echo")).toMatchObject({ read_only: true, approval: "always" });
    const long = of("t").find((n) => n.startsWith("t__a_tool"))!;
    expect(long).toMatch(/^t__a_tool_with_spaces_and_a_name_far_too_long_for_the_p_[0-9a-f]{8}$/);
    expect(long).toHaveLength(64);
  });

  test("a conversation gets every server's tools by default (<server>__*); a name no ready server lists, or of no server, is refused", async () => {
    const conv = await client().createConversation({});
    expect(conv.tools).toEqual(expect.arrayContaining(["calculate", "t__*", "h__*", "mute__*"]));
    expect(conv.tools).not.toContain("t__echo");
    expect((await inject("POST", "/conversations", { tools: ["t__nope"] })).json()).toMatchObject({
      error: { code: "invalid_request", message: expect.stringMatching(/unknown tool "t__nope"/) },
    });
    expect((await inject("POST", "/conversations", { tools: ["zz__*"] })).statusCode).toBe(400);
    // mute has not listed its tools yet: they cannot be checked, so they are taken.
    expect((await inject("POST", "/conversations", { tools: ["mute__anything"] })).statusCode).toBe(201);
    const clash = await inject("POST", "/conversations", {
      tools: ["t__*"],
      client_tools: [{ name: "t__mine", description: "", input_schema: { type: "object" } }],
    });
    expect(clash.json()).toMatchObject({
      error: { code: "invalid_request", message: expect.stringMatching(/t__mine.*clash/) },
    });
  });
});

describe.each([
  ["stdio", "t"],
  ["Streamable HTTP", "h"],
] as const)("an MCP server over %s", (_transport, server) => {
  test.each(["anthropic", "openai"] as const)(
    "a call through %s reaches the tool and its text is the result",
    async (provider) => {
      const { run, result } = await callTool(`${server}__echo`, { text: "hello" }, provider);
      expect(run.status).toBe("completed");
      expect(result).toMatchObject({ name: `${server}__echo`, is_error: false, content: "echo: hello" });
    },
  );

  test("isError and a result that is not one are error results with what the server said; structured content and media are described", async () => {
    expect((await callTool(`${server}__fail`)).result).toMatchObject({ is_error: true, content: "the disk is full" });
    const garbage = await callTool(`${server}__garbage`);
    expect(garbage.result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(new RegExp(`^${server}__garbage|^garbage failed on the MCP server ${server}`)),
    });
    expect(garbage.run.status).toBe("completed");
    expect(JSON.parse((await callTool(`${server}__structured`)).result.content)).toEqual({
      temperature: 21.5,
      unit: "C",
    });
    expect((await callTool(`${server}__media`)).result.content).toBe(
      [
        "Here is what I found.",
        "[image image/png, 1,234 bytes: it could not be kept: it is not image/png: its bytes are of no type loopd knows]",
        "[audio audio/wav, 10 bytes]",
        "the embedded notes",
        "[resource file:///photo.jpg image/jpeg, 30 bytes]",
        "[resource file:///elsewhere.md]",
      ].join("\n"),
    );
  });

  test("a 50 MB result is an error result, the run goes on and the server stays up", async () => {
    const { run, result } = await callTool(`${server}__huge`);
    expect(result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/more than loopd reads|longer than loopd reads/),
    });
    expect(run.status).toBe("completed");
    expect((await callTool(`${server}__echo`, { text: "still here" })).result.content).toBe("echo: still here");
    expect((await serverStatus(server)).restarts).toBe(0);
  });
});

describe("what the model sends is checked before anything reaches a server", () => {
  test("arguments that fail the tool's input schema, and a tool the server does not have, are error results; nothing is called", async () => {
    const before = stdioRecords().length;
    const { run, results } = await callTools([
      { name: "t__echo", input: { text: 5 } },
      { name: "t__nope", input: {} },
    ]);
    expect(results[0]).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^invalid arguments for t__echo: text: must be string/),
    });
    expect(results[1]).toMatchObject({ is_error: true, content: expect.stringMatching(/unknown tool "?t__nope/i) });
    expect(run, JSON.stringify(run.error)).toMatchObject({ status: "completed" });
    expect(
      stdioRecords()
        .slice(before)
        .filter((r) => r.type === "call"),
    ).toEqual([]);
  });

  test("a tool with a long name is called by its original name", async () => {
    const long = (await get("/tools")).data.find((t: { name: string }) => t.name.startsWith("t__a_tool")).name;
    expect((await callTool(long)).result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^no tool a\.tool with spaces\/and a name far too long/),
    });
  });

  test("two read-only calls of one step run at the same time", async () => {
    // Each waits on the server until both are in flight: "alone" after 5 s if they ran one after the other.
    const { results } = await callTools([
      { name: "t__gather", input: { of: 2 } },
      { name: "t__gather", input: { of: 2 } },
    ]);
    expect(results.map((r) => r.content)).toEqual(["together", "together"]);
  });

  test("a destructive tool waits for a person's yes and runs only when approved; one that says it is not destructive runs at once", async () => {
    const conv = await client().createConversation({ provider: "anthropic" });
    f.llm.script({ toolCalls: [{ name: "t__write_note", input: { note: "remember" } }] }, { text: "Saved." });
    const before = stdioRecords().length;
    const paused = (await client().send(conv.id, { content: "Save a note." })).json().run;
    expect(paused).toMatchObject({
      status: "requires_action",
      required_action: { tool_calls: [{ name: "t__write_note", action: "approve" }] },
    });
    expect(
      stdioRecords()
        .slice(before)
        .filter((r) => r.type === "call"),
    ).toEqual([]);
    const id = paused.required_action.tool_calls[0].tool_call_id;
    const done = await inject("POST", `/conversations/${conv.id}/runs/${paused.id}/actions`, {
      approvals: [{ tool_call_id: id, approve: true }],
    });
    expect(done.json()).toMatchObject({ run: { status: "completed" } });
    expect(
      stdioRecords()
        .slice(before)
        .filter((r) => r.type === "call"),
    ).toEqual([expect.objectContaining({ name: "write_note", args: { note: "remember" } })]);
    expect((await callTool("t__safe_write", { note: "x" })).result).toMatchObject({
      is_error: false,
      content: "saved: x",
    });
  });
});

describe("calls end when they must, and the server hears it", () => {
  test("a call past its timeout is a timeout result, and the server gets notifications/cancelled", async () => {
    const before = stdioRecords().length;
    const { run, result } = await callTool("limited__hang");
    expect(result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^limited__hang timed out after 0\.5 s/),
    });
    expect(run.status).toBe("completed");
    await vi.waitFor(() =>
      expect(stdioRecords().slice(before)).toContainEqual(expect.objectContaining({ type: "cancelled", name: "hang" })),
    );
  });

  test.each([
    ["stdio", "t"],
    ["Streamable HTTP", "h"],
  ] as const)("a cancelled run's call in flight (%s) is cancelled on the server too", async (_transport, server) => {
    const records = () => (server === "t" ? stdioRecords() : http.records);
    const before = records().length;
    const conv = await client().createConversation({ provider: "openai" });
    f.llm.script({ toolCalls: [{ name: `${server}__hang`, input: {} }] });
    const sent = client().send(conv.id, { content: "Hang." });
    await vi.waitFor(() =>
      expect(records().slice(before)).toContainEqual(expect.objectContaining({ type: "call", name: "hang" })),
    );
    const run = (await get(`/conversations/${conv.id}/runs`)).data[0];
    expect((await inject("POST", `/conversations/${conv.id}/runs/${run.id}/cancel`)).statusCode).toBe(200);
    expect((await sent).json().run.status).toBe("cancelled");
    await vi.waitFor(() =>
      expect(records().slice(before)).toContainEqual(expect.objectContaining({ type: "cancelled", name: "hang" })),
    );
  });
});

test("a stdio server gets PATH, HOME, LANG and its own env, never loopd's secrets", async () => {
  const names = (await callTool("t__env")).result.content.split(",");
  const inherited = ["HOME", "LANG", "PATH"].filter((n) => process.env[n] !== undefined);
  expect(names.sort()).toEqual([...inherited, "LOG_LEVEL", "RECORD_FILE"].sort());
});

test("a call's trace span and metrics name the source and the server", async () => {
  const { run, conversationId } = await callTools([{ name: "t__echo", input: { text: "traced" } }]);
  const trace = await get(`/conversations/${conversationId}/runs/${run.id}/trace`);
  expect(trace.spans.find((s: { type: string }) => s.type === "tool.call")).toMatchObject({
    name: "t__echo",
    tool_source: "mcp",
    server: "t",
  });
  const metrics = (await inject("GET", "/metrics")).body;
  expect(metrics).toMatch(
    /loopd_tool_call_duration_seconds_count\{tool="t__echo",source="mcp",server="t",outcome="ok"\} \d+/,
  );
});

test("a server's new tools are listed when it says they changed, and a conversation with <server>__* is offered them", async () => {
  const conv = await client().createConversation({ provider: "openai", tools: ["h__*"] });
  f.llm.script({ toolCalls: [{ name: "h__add_tool", input: { name: "late_arrival" } }] }, { text: "Added." });
  await client().send(conv.id, { content: "Add a tool." });
  await vi.waitFor(async () => expect(await tool("h__late_arrival")).toMatchObject({ source: "mcp", server: "h" }));
  f.llm.script({ text: "I see it." });
  await client().send(conv.id, { content: "What can you use?" });
  const offered = JSON.stringify(f.llm.requests.at(-1)!.body.tools);
  expect(offered).toContain("h__late_arrival");
  expect(offered).not.toContain("t__echo");
});

test("a server that exits mid-call: the call is answered at once as unavailable, its tools say so, and it is started again", async () => {
  const started = Date.now();
  const { run, result } = await callTool("t__crash");
  expect(result).toMatchObject({
    is_error: true,
    content: "the MCP server t is unavailable (exited with code 1); try again later or use another tool",
  });
  expect(run.status).toBe("completed");
  // Not the 10 s timeout: the call ended when the server did.
  expect(Date.now() - started).toBeLessThan(9_000);
  expect(await tool("t__echo")).toMatchObject({ status: "unavailable" });
  expect((await callTool("t__echo", { text: "too soon" })).result).toMatchObject({
    is_error: true,
    content: expect.stringMatching(/^the MCP server t is unavailable \(exited with code 1\)/),
  });
  await vi.waitFor(
    async () => expect(await serverStatus("t")).toMatchObject({ status: "ready", restarts: 1, last_error: null }),
    { timeout: 10_000, interval: 50 },
  );
  expect((await callTool("t__echo", { text: "back" })).result).toMatchObject({
    is_error: false,
    content: "echo: back",
  });
  expect((await inject("GET", "/metrics")).body).toMatch(/loopd_mcp_server_restarts_total\{server="t"\} 1/);
});

test("a Streamable HTTP server that goes away: calls answer unavailable, and it is reached again once it is back", async () => {
  const port = Number(new URL(http.url).port);
  await http.close();
  const { result, run } = await callTool("h__echo", { text: "anyone?" });
  expect(result).toMatchObject({
    is_error: true,
    content: expect.stringMatching(
      /^the MCP server h is unavailable \(its connection failed \(ECONNREFUSED\)\); try again later or use another tool$/,
    ),
  });
  expect(run.status).toBe("completed");
  expect(await serverStatus("h")).toMatchObject({
    status: "restarting",
    last_error: "its connection failed (ECONNREFUSED)",
  });
  http = await startHttpMcpServer({ port });
  await vi.waitFor(async () => expect(await serverStatus("h")).toMatchObject({ status: "ready", last_error: null }), {
    timeout: 10_000,
    interval: 50,
  });
  expect((await serverStatus("h")).restarts).toBeGreaterThanOrEqual(1);
  expect((await callTool("h__echo", { text: "back" })).result).toMatchObject({
    is_error: false,
    content: "echo: back",
  });
});
