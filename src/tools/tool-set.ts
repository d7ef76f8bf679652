import { isCommandTool, type Tool } from "./define-tool.js";
import type { ToolServerStatus } from "./tool-server-status.js";

/**
 * The tools of one source of `TOOLS_FILE` (its HTTP endpoints, its MCP
 * servers): the tool registry reads them again whenever `version` changes,
 * so a source whose tools come and go (a server's, as it lists them) fits
 * as well as one whose tools are fixed.
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
  /** When `name` stands for a group of its tools (`fs__*`: every tool of the server `fs`), which ones; else null. */
  wildcard(name: string): ((tool: Tool) => boolean) | null;
  /** Starts it in the background (loopd answers meanwhile). */
  start(): void;
  close(): Promise<void>;
  /** Its servers, as `GET /tools/servers` shows them. */
  statuses(): ToolServerStatus[];
}

/** Tools that never change (an endpoint's): nothing to start, no server, offered by default but `run_command`. */
export function fixedToolSet(tools: readonly Tool[]): ToolSet {
  return {
    tools: () => [...tools],
    version: () => 0,
    accepts: () => false,
    defaults: () => tools.filter((t) => !isCommandTool(t)).map((t) => t.name),
    wildcard: () => null,
    start: () => {},
    close: async () => {},
    statuses: () => [],
  };
}
