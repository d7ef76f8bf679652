import type { Logger } from "pino";
import type { Config } from "../config.js";
import { createRedactor } from "../util/redact.js";
import { mcpMessageBytes } from "./configured-tools.js";
import { createMcpServers } from "./mcp/mcp-servers.js";
import type { ToolSet } from "./tool-set.js";
import type { ToolSandbox } from "./sandbox/tool-sandbox.js";

/**
 * The tool sets of `TOOLS_FILE`'s sources whose tools come and go (its MCP
 * servers), which the tool registry reads again when they change. A new such
 * source is one more entry here.
 */
export function createToolSets(
  config: Config,
  { sandbox, log, onRestart }: { sandbox: ToolSandbox; log: Logger; onRestart: (server: string) => void },
): ToolSet[] {
  return [
    createMcpServers(config.tools.mcp, {
      sandbox: sandbox.forServers ?? sandbox,
      defaultTimeoutMs: config.tools.timeoutMs,
      maxMessageBytes: mcpMessageBytes(config),
      env: process.env,
      log: log.child({ component: "mcp" }),
      redact: createRedactor(config.secrets).text,
      onRestart,
    }),
  ];
}
