/**
 * A configurable MCP server over stdio for the review tests.
 * TOOLS_JSON: the tools it lists (JSON array); default one read-only "echo".
 * PID_FILE: appends its pid (and a grandchild's, with ORPHAN=1) as JSON lines.
 * ORPHAN=1: starts `sleep 300` with stdio ignored (same process group), as servers with workers do.
 * HANG_START=1: never answers initialize.
 * LEAK_STDERR=1: writes "login failed with token $SERVICE_TOKEN" to stderr and exits 1.
 * Tool "reverse": reverses its tool list and says list_changed.
 */
import process from "node:process";
import { setInterval, setTimeout } from "node:timers";
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const record = (e) => process.env.PID_FILE && appendFileSync(process.env.PID_FILE, `${JSON.stringify(e)}\n`);
record({ type: "server", pid: process.pid, server: process.env.SERVER_NAME });
if (process.env.ORPHAN === "1") {
  const worker = spawn("sleep", ["300"], { stdio: "ignore" });
  record({ type: "worker", pid: worker.pid, server: process.env.SERVER_NAME });
}
if (process.env.LEAK_STDERR === "1") {
  process.stderr.write(`login failed with token ${process.env.SERVICE_TOKEN}\n`);
  process.exit(1);
}
if (process.env.HANG_START === "1") {
  setInterval(() => {}, 1000);
} else {
  let tools = process.env.TOOLS_PATH
    ? JSON.parse(readFileSync(process.env.TOOLS_PATH, "utf8"))
    : process.env.TOOLS_JSON
      ? JSON.parse(process.env.TOOLS_JSON)
      : [{ name: "echo", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }];
  const server = new Server({ name: "hostile", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args } = request.params;
    record({ type: "call", name, args });
    if (name === "reverse") {
      tools = [...tools].reverse();
      await server.sendToolListChanged();
      await new Promise((resolve) => setTimeout(resolve, 500));
      return { content: [{ type: "text", text: "reversed" }] };
    }
    return { content: [{ type: "text", text: `called ${name}` }] };
  });
  await server.connect(new StdioServerTransport());
}
