/**
 * Tools that are HTTP endpoints (TOOLS_FILE's `http`), against a real
 * receiver on 127.0.0.1 that verifies the Standard Webhooks signature with
 * the `standardwebhooks` package, and every way a receiver can go wrong.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { api } from "../../support/helpers/api.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";

const SECRET = `whsec_${randomBytes(24).toString("base64")}`;

interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  verified: boolean;
}
const received: Received[] = [];
let flaky = 0;
let receiver: Server;
let base = "";
/** A port nothing listens on. */
let closedPort = 0;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  receiver = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    let verified: boolean;
    try {
      new Webhook(SECRET).verify(body, req.headers as Record<string, string>);
      verified = true;
    } catch {
      verified = false;
    }
    const at = req.url ?? "/";
    received.push({ path: at, headers: req.headers, body, verified });
    if (at === "/lookup") {
      if (!verified) return res.writeHead(401).end("bad signature");
      const { input } = JSON.parse(body) as { input: { number: string } };
      return res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ output: { order: input.number, status: "shipped" } }));
    }
    if (at === "/text") return res.writeHead(200, { "content-type": "text/plain" }).end("plain words, not JSON");
    if (at === "/refuse")
      return res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ output: "order 12 not found", is_error: true }));
    if (at === "/slow") return; // never answers: the tool's timeout ends it
    if (at === "/huge") {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = "x".repeat(64 * 1024);
      let sent = 0;
      const more = () => {
        while (sent < 50 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return res.once("drain", more);
        }
        res.end();
      };
      res.on("error", () => {});
      return more();
    }
    if (at === "/broken") return res.writeHead(500, { "content-type": "text/plain" }).end("database exploded at row 7");
    if (at === "/close") {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write('{"output": "half');
      return setImmediate(() => res.destroy());
    }
    if (at === "/flaky")
      return flaky++ % 2 === 0
        ? res.writeHead(503).end("busy")
        : res.writeHead(200, { "content-type": "application/json" }).end('{"output": "second time lucky"}');
    res.writeHead(404).end("no such tool");
  });
  base = `http://127.0.0.1:${await listen(receiver)}`;
  const probe = createServer();
  closedPort = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

const object = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: "object",
  properties,
  required,
});
function toolsFile(): string {
  const tool = (name: string, at: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: `${name}, over HTTP`,
    input_schema: object({ number: { type: "string" } }),
    url: `${base}${at}`,
    read_only: true,
    ...extra,
  });
  const file = path.join(mkdtempSync(path.join(tmpdir(), "loopd-tools-")), "tools.json");
  writeFileSync(
    file,
    JSON.stringify({
      http: [
        tool("lookup_order", "/lookup", {
          input_schema: object({ number: { type: "string", pattern: "^[0-9]+$" } }, ["number"]),
          secret: "${TEST_WEBHOOK_SECRET}",
          headers: { "x-team": "${TEST_TEAM}" },
        }),
        tool("plain_text", "/text"),
        tool("refusing", "/refuse"),
        tool("slow", "/slow", { timeout_ms: 300 }),
        tool("huge", "/huge"),
        tool("broken", "/broken"),
        tool("closer", "/close"),
        tool("flaky_read", "/flaky"),
        tool("flaky_write", "/flaky", { read_only: false, approval: "never" }),
        tool("unreachable", `/x`, { url: `http://127.0.0.1:${closedPort}/x` }),
        tool("create_ticket", "/lookup", { read_only: false }),
      ],
    }),
  );
  return file;
}

const f = useLoopd(() => ({ env: { TOOLS_FILE: toolsFile(), TEST_WEBHOOK_SECRET: SECRET, TEST_TEAM: "billing" } }));
const client = () => api(f.loopd.app);

/** The model calls `name` with `input` once; the run's result for it, and the run. */
async function callTool(name: string, input: Record<string, unknown>, provider: "anthropic" | "openai" = "openai") {
  const conv = await client().createConversation({ provider });
  f.llm.script({ toolCalls: [{ name, input }] }, { text: "Done." });
  const run = (await client().send(conv.id, { content: `Use ${name}.` })).json().run;
  const results = (await client().history(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0]);
  return { run, result: results[0], conversationId: conv.id };
}

describe.each(["anthropic", "openai"] as const)("an HTTP tool through %s", (provider) => {
  test("is called signed, with its Idempotency-Key and headers, and its JSON output is the result", async () => {
    received.length = 0;
    const { run, result, conversationId } = await callTool("lookup_order", { number: "1234" }, provider);
    expect(run).toMatchObject({ status: "completed" });
    expect(result).toMatchObject({ name: "lookup_order", is_error: false });
    expect(JSON.parse(result.content)).toEqual({ order: "1234", status: "shipped" });
    const [call] = received;
    expect(call!.verified).toBe(true);
    expect(call!.headers["idempotency-key"]).toBe(result.tool_call_id);
    expect(call!.headers["webhook-id"]).toBe(result.tool_call_id);
    expect(call!.headers["x-team"]).toBe("billing");
    expect(JSON.parse(call!.body)).toEqual({
      tool_call_id: result.tool_call_id,
      name: "lookup_order",
      input: { number: "1234" },
      conversation_id: conversationId,
      run_id: run.id,
    });
  });
});

describe("what a receiver answers becomes a result the model can act on", () => {
  test("input that fails the tool's input_schema is refused before anything is sent", async () => {
    received.length = 0;
    const { result } = await callTool("lookup_order", { number: "12a" });
    expect(result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^invalid arguments for lookup_order: number: must match pattern/),
    });
    expect(received).toEqual([]);
  });

  test("a 2xx body that is not the JSON envelope is the result as text; an envelope with is_error is an error result with its output", async () => {
    expect((await callTool("plain_text", {})).result).toMatchObject({
      is_error: false,
      content: "plain words, not JSON",
    });
    expect((await callTool("refusing", {})).result).toMatchObject({ is_error: true, content: "order 12 not found" });
  });

  test("a 500 says its status and the start of its body; a receiver that never answers times out; a refused connection says so", async () => {
    expect((await callTool("broken", {})).result).toMatchObject({
      is_error: true,
      content:
        "broken answered HTTP 500: database exploded at row 7; the service failed: try again later or use another tool.",
    });
    expect((await callTool("slow", {})).result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^slow timed out after 0\.3 s/),
    });
    expect((await callTool("unreachable", {})).result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^unreachable could not reach http:\/\/127\.0\.0\.1:\d+\/x \(ECONNREFUSED\)/),
    });
  });

  test("a 50 MB answer is not read past the cap; a connection closed mid-answer says so; the runs go on", async () => {
    const huge = await callTool("huge", {});
    expect(huge.result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^huge's answer is longer than \d+ characters/),
    });
    expect(huge.run.status).toBe("completed");
    const closer = await callTool("closer", {});
    expect(closer.result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^closer: the connection to .* closed before its answer ended/),
    });
    expect(closer.run.status).toBe("completed");
  });

  test("a read-only tool is tried again once on a 503; one that is not, never", async () => {
    received.length = 0;
    flaky = 0;
    expect((await callTool("flaky_read", {})).result).toMatchObject({ is_error: false, content: "second time lucky" });
    expect(received.filter((r) => r.path === "/flaky")).toHaveLength(2);
    received.length = 0;
    flaky = 0;
    expect((await callTool("flaky_write", {})).result).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^flaky_write answered HTTP 503: busy/),
    });
    expect(received.filter((r) => r.path === "/flaky")).toHaveLength(1);
  });

  test("a tool that is not read-only waits for approval by default", async () => {
    received.length = 0;
    const conv = await client().createConversation({ provider: "openai" });
    f.llm.script({ toolCalls: [{ name: "create_ticket", input: { number: "7" } }] });
    const run = (await client().send(conv.id, { content: "Open a ticket." })).json().run;
    expect(run).toMatchObject({
      status: "requires_action",
      required_action: { tool_calls: [{ name: "create_ticket", action: "approve" }] },
    });
    expect(received).toEqual([]);
  });
});

test("GET /tools lists the built-ins, then the HTTP tools, each with its source and approval; GET /tools/servers is empty", async () => {
  const tools = (await f.loopd.app.inject({ method: "GET", url: "/tools" })).json().data;
  const names = tools.map((t: { name: string }) => t.name);
  expect(names.slice(0, 5)).toEqual(["get_current_time", "calculate", "read_file", "list_files", "search_files"]);
  expect(tools.find((t: { name: string }) => t.name === "lookup_order")).toEqual({
    name: "lookup_order",
    description: "lookup_order, over HTTP",
    input_schema: object({ number: { type: "string", pattern: "^[0-9]+$" } }, ["number"]),
    source: "http",
    server: null,
    read_only: true,
    approval: "never",
    status: "ready",
  });
  expect(tools.find((t: { name: string }) => t.name === "create_ticket")).toMatchObject({
    source: "http",
    read_only: false,
    approval: "always",
  });
  // With a TOOLS_FILE, a conversation gets every configured tool by default.
  expect((await client().createConversation({})).tools).toEqual(names);
  expect((await f.loopd.app.inject({ method: "GET", url: "/tools/servers" })).json()).toEqual({ data: [] });
});

test("/metrics counts HTTP tool calls under their source", async () => {
  await callTool("plain_text", {});
  const text = (await f.loopd.app.inject({ method: "GET", url: "/metrics" })).body;
  expect(text).toMatch(
    /loopd_tool_call_duration_seconds_count\{tool="plain_text",source="http",server="",outcome="ok"\} [1-9]/,
  );
});
