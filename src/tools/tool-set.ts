import type { Tool } from "./define-tool.js";
import type { McpServerStatus } from "./mcp/mcp-server-status.js";

/**
 * A source of tools that come and go (an MCP server's, as it lists them):
 * the tool registry reads them again whenever `version` changes.
 */
export interface ToolSet {
  /** Its tools now, in a stable order. */
  tools(): Tool[];
  /** Goes up whenever its tools (or their servers' status) change. */
  version(): number;
  /** Names a conversation may use that are not (yet) among `tools` (`fs__*`). */
  accepts(name: string): boolean;
  /** What a conversation gets by default from it, besides the fixed tools. */
  defaults(): string[];
  /** Starts it in the background (loopd answers meanwhile). */
  start?(): void;
  close?(): Promise<void>;
  /** Its servers, as `GET /tools/servers` shows them. */
  statuses?(): McpServerStatus[];
}
