/**
 * An MCP server over stdio that says a call's arguments on stderr and dies:
 * its one tool `save` writes `saving <arguments>` to stderr, keeps them in
 * `STATE_FILE` and exits with code 1; every later start finds that file,
 * writes `still failing on <arguments>` to stderr and exits with code 3
 * (another code: a test can tell the restart's failure from the call's). So the server stays down, its last stderr naming the caller's
 * arguments, for as long as a test needs to look.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import process from "node:process";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const state = process.env.STATE_FILE;
if (existsSync(state)) {
  // The SDK is not even started: the handshake never comes.
  process.stderr.write(`still failing on ${readFileSync(state, "utf8")}\n`, () => process.exit(3));
}
const server = new Server({ name: "loopd-stderr-crash", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    {
      name: "save",
      description: "Saves a text.",
      inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      annotations: { readOnlyHint: true },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, (request) => {
  const args = JSON.stringify(request.params.arguments ?? {});
  appendFileSync(state, args);
  process.stderr.write(`saving ${args}\n`, () => process.exit(1));
  return new Promise(() => {});
});
await server.connect(new StdioServerTransport());
