/** MCP over HTTP: size caps on every path (the SSE fallback, JSON answers), a server that dies mid-call. Real SDK servers on 127.0.0.1; each test failed before its fix. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { api } from "../../support/helpers/api.js";
import { useLoopd } from "../../support/helpers/use-loopd.js";
import { startHttpMcpServer, startSseMcpServer, type HttpMcpServer } from "../../support/mcp/http-mcp-server.js";

const dir = mkdtempSync(path.join(tmpdir(), "loopd-mcp-"));
let sse: HttpMcpServer, json: HttpMcpServer, dying: HttpMcpServer;
beforeAll(async () => {
  [sse, json, dying] = await Promise.all([
    startSseMcpServer(),
    startHttpMcpServer({ json: true }),
    startHttpMcpServer(),
  ]);
});
afterAll(async () => Promise.all([sse, json, dying].map((s) => s.close().catch(() => {}))));

function toolsFile() {
  const file = path.join(dir, "tools.json");
  writeFileSync(
    file,
    JSON.stringify({
      mcp: [
        { name: "old", url: sse.url, headers: { Authorization: "Bearer old-token" } },
        { name: "js", url: json.url },
        { name: "dies", url: dying.url, timeout_ms: 8_000 },
      ],
    }),
  );
  return file;
}
const f = useLoopd(() => ({ env: { TOOLS_FILE: toolsFile() } }));
const client = () => api(f.loopd.app);
const servers = async () => (await f.loopd.app.inject({ method: "GET", url: "/tools/servers" })).json().data;
async function callTool(name: string) {
  const conv = await client().createConversation({ provider: "openai" });
  f.llm.script({ toolCalls: [{ name, input: {} }] }, { text: "Done." });
  await client().send(conv.id, { content: "go" });
  return (await client().history(conv.id)).filter((m) => m.role === "tool").map((m) => m.content[0])[0];
}

beforeAll(async () => {
  await vi.waitFor(
    async () => expect((await servers()).map((s: { status: string }) => s.status)).toEqual(["ready", "ready", "ready"]),
    { timeout: 20_000, interval: 100 },
  );
});

test("an SSE-only server gets the entry's headers on its event stream too", () => {
  expect(sse.requests.filter((r) => r.method === "GET").map((r) => r.authorization)).toEqual(["Bearer old-token"]);
});

test("over the SSE fallback, a 50 MB answer is cut at the cap: the stream that carries every answer is lost, so the server is reached again", async () => {
  const result = await callTool("old__huge");
  expect(result).toMatchObject({
    is_error: true,
    content:
      "the MCP server old is unavailable (it sent a message longer than loopd reads); try again later or use another tool",
  });
  await vi.waitFor(
    async () =>
      expect((await servers()).find((s: { name: string }) => s.name === "old")).toMatchObject({ status: "ready" }),
    { timeout: 10_000, interval: 50 },
  );
  expect(await callTool("old__structured")).toMatchObject({ is_error: false });
});

test("a JSON (not SSE) answer past the cap is an error result that says so", async () => {
  const result = await callTool("js__huge");
  expect(result).toMatchObject({ is_error: true, content: expect.stringMatching(/longer than loopd reads/) });
  expect((await servers())[1]).toMatchObject({ status: "ready" });
});

test("a Streamable HTTP server that dies mid-call: the call ends at once as unavailable, not at its timeout", async () => {
  const started = Date.now();
  const result = await callTool("dies__crash");
  const took = Date.now() - started;
  expect({ took: took < 4_000, result }).toMatchObject({
    took: true,
    result: { is_error: true, content: expect.stringMatching(/^the MCP server dies is unavailable/) },
  });
});
