/**
 * The test MCP server over stdio: what it sees goes as JSON lines to the
 * file `RECORD_FILE` names; `NOISE=1` writes a line that is not JSON-RPC to
 * stdout first; `HANG_START=1` never answers the handshake.
 */
import process from "node:process";
import { setInterval } from "node:timers";
import { appendFileSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createTestMcpServer } from "./test-mcp-server.mjs";

const file = process.env.RECORD_FILE;
const record = (entry) => file && appendFileSync(file, `${JSON.stringify({ ...entry, pid: process.pid })}\n`);
if (process.env.NOISE === "1") process.stdout.write("this is not JSON-RPC\n");
if (process.env.HANG_START === "1") {
  setInterval(() => {}, 1_000);
} else {
  record({ type: "started" });
  await createTestMcpServer({ record }).connect(new StdioServerTransport());
}
