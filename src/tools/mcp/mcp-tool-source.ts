import { SECRET_NAME } from "../../util/redact.js";
import type { ToolSource } from "../tool-source.js";
import { mcpServerEntry, type McpServerEntry } from "./mcp-server-entry.js";

/** `TOOLS_FILE`'s `mcp`: each entry a server whose tools come and go as it lists them. */
export const mcpToolSource: ToolSource<McpServerEntry, "mcp"> = {
  key: "mcp",
  fileSchema: mcpServerEntry,
  // Its header values, and the environment values named like secrets.
  secretsOf: (entry) => [
    ...Object.values(entry.headers),
    ...Object.entries(entry.env).flatMap(([name, value]) => (SECRET_NAME.test(name) ? [value] : [])),
  ],
  claimOf: (entry) => ({ family: entry.name }),
  programsOf: (entries) => (entries.some((entry) => entry.command !== undefined) ? "stdio MCP servers" : null),
  // The SDK is loaded only when servers are made, not with the configuration.
  async create(entries, { sandbox, defaultTimeoutMs, biggestResultChars, env, log, redact, onRestart }) {
    const { createMcpServers } = await import("./mcp-servers.js");
    return createMcpServers(entries, {
      sandbox: sandbox.forServers ?? sandbox,
      defaultTimeoutMs,
      maxMessageBytes: mcpMessageBytes(biggestResultChars),
      env,
      log: log.child({ component: "mcp" }),
      redact,
      onRestart,
    });
  },
};

/**
 * The longest message read from an MCP server: room for the biggest result
 * cap configured (a result is clipped to it after), and for what a result
 * may carry besides its text (an image of a few MB, described, not shown),
 * and small enough that parsing it does not hold the event loop long.
 */
export const mcpMessageBytes = (biggestResultChars: number): number =>
  Math.max(4 * 1024 * 1024, biggestResultChars * 4);
