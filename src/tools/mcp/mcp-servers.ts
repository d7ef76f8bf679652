import type { Tool } from "../define-tool.js";
import type { ToolSet } from "../tool-set.js";
import type { McpServerEntry } from "./mcp-server-entry.js";
import { familyOf } from "../tool-source.js";
import type { ToolServerStatus } from "../tool-server-status.js";
import { SERVER_WILDCARD } from "./mcp-tool-name.js";
import { createMcpServer, type McpServerOptions } from "./mcp-server.js";

/** The MCP servers of `TOOLS_FILE`, as one changing set of tools (see `createToolRegistry`). */
export interface McpServers extends ToolSet {
  /** Starts every server in the background. */
  start(): void;
  /** Every server's tools, in the file's order. */
  tools(): Tool[];
  /** Goes up whenever a server's tools or status change. */
  version(): number;
  statuses(): ToolServerStatus[];
  /** `fs__*` for a configured server `fs`, and `fs__x` while `fs` is not ready (its tools cannot be checked yet). */
  accepts(name: string): boolean;
  /** `<server>__*` for every server: all of its tools, present and future. */
  defaults(): string[];
  /** `fs__*`: every tool of the server `fs` (none for a server that is not configured). */
  wildcard(name: string): ((tool: Tool) => boolean) | null;
  close(): Promise<void>;
}

export function createMcpServers(
  entries: readonly McpServerEntry[],
  options: Omit<McpServerOptions, "onChange" | "onRestart"> & { onRestart?: (server: string) => void },
): McpServers {
  let version = 0;
  const servers = entries.map((entry) =>
    createMcpServer(entry, {
      ...options,
      onChange: () => version++,
      onRestart: () => options.onRestart?.(entry.name),
    }),
  );
  return {
    start: () => servers.forEach((s) => s.start()),
    tools: () => servers.flatMap((s) => s.tools()),
    version: () => version,
    statuses: () => servers.map((s) => s.status()),
    accepts(name) {
      const server = SERVER_WILDCARD.exec(name)?.[1] ?? familyOf(name);
      const found = servers.find((s) => s.name === server);
      return !!found && (SERVER_WILDCARD.test(name) || found.status().status !== "ready");
    },
    defaults: () => servers.map((s) => `${s.name}__*`),
    wildcard(name) {
      const server = SERVER_WILDCARD.exec(name)?.[1];
      return server === undefined ? null : (tool) => tool.server === server;
    },
    close: async () => void (await Promise.all(servers.map((s) => s.close()))),
  };
}
