import { httpToolSource } from "./http/http-tool-source.js";
import { mcpToolSource } from "./mcp/mcp-tool-source.js";
import type { ToolSource } from "./tool-source.js";

/**
 * The sources of `TOOLS_FILE`, in the order their tools are listed (after
 * the built-ins). A new source is its folder and one entry here: the file's
 * sections, its secrets, the sandbox and the tool registry follow from it.
 */
export const TOOL_SOURCES = [httpToolSource, mcpToolSource] as const;

/** Every source as the code that treats them alike sees it. */
export const toolSources: readonly ToolSource[] = TOOL_SOURCES;

/** Where a tool comes from (`GET /tools`): the built-ins, a source of `TOOLS_FILE`, or run_command. */
export const TOOL_ORIGINS: readonly string[] = ["builtin", ...toolSources.map((source) => source.key), "command"];
