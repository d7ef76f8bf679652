import type { Config } from "../config.js";
import { createBuiltinTools } from "./builtin/index.js";
import { createRunCommandTool } from "./command/run-command.js";
import type { Tool } from "./define-tool.js";
import { createHttpTool } from "./http/http-tool.js";
import type { ToolSandbox } from "./sandbox/tool-sandbox.js";
import { toolSandboxOf } from "./sandbox/choose-tool-sandbox.js";

/** The built-ins (`run_command` last among them, when enabled, confined by `sandbox`), then the HTTP tools of `TOOLS_FILE`. */
export function configuredTools(
  config: Config,
  { sandbox = toolSandboxOf(config) }: { sandbox?: ToolSandbox } = {},
): Tool[] {
  const { tools } = config;
  const command = tools.runCommand
    ? [createRunCommandTool({ timeoutMs: tools.timeoutMs, env: tools.runCommand.env, sandbox })]
    : [];
  return [...createBuiltinTools(), ...command, ...tools.http.map(createHttpTool)];
}

/**
 * The longest message read from an MCP server: room for the biggest result
 * cap configured (a result is clipped to it after), and for what a result
 * may carry besides its text (an image of a few MB, described, not shown),
 * and small enough that parsing it does not hold the event loop long.
 */
export function mcpMessageBytes({ tools }: Config): number {
  const biggestCap = Math.max(tools.resultMaxChars, ...Object.values(tools.resultMaxCharsByTool));
  return Math.max(4 * 1024 * 1024, biggestCap * 4);
}

/** Tools with the result caps the configuration sets for them by name. */
export function withResultCaps(tools: Tool[], caps: Record<string, number>): Tool[] {
  return tools.map((tool) => (caps[tool.name] === undefined ? tool : { ...tool, maxResultChars: caps[tool.name] }));
}
