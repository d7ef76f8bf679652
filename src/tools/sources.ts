import type { Logger } from "pino";
import type { Config } from "../config.js";
import { createRedactor } from "../util/redact.js";
import { mcpMessageBytes } from "./configured-tools.js";
import { createMcpServers, type McpServers } from "./mcp/mcp-servers.js";
import type { ToolSandbox } from "./sandbox/tool-sandbox.js";

/**
 * The tool sources of `TOOLS_FILE` whose tools come and go (its MCP
 * servers), as one changing set the tool registry reads again when it changes.
 */
export function createToolSets(
  config: Config,
  { sandbox, log, onRestart }: { sandbox: ToolSandbox; log: Logger; onRestart: (server: string) => void },
): McpServers {
  return createMcpServers(config.tools.mcp, {
    sandbox: sandbox.forServers ?? sandbox,
    defaultTimeoutMs: config.tools.timeoutMs,
    maxMessageBytes: mcpMessageBytes(config),
    env: process.env,
    log: log.child({ component: "mcp" }),
    redact: createRedactor(config.secrets).text,
    onRestart,
  });
}
