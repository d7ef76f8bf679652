import type { Logger } from "pino";
import type { Config } from "../config.js";
import { createRedactor } from "../util/redact.js";
import { createBuiltinTools } from "./builtin/index.js";
import { createRunCommandTool } from "./command/run-command.js";
import type { Tool } from "./define-tool.js";
import type { ToolSandbox } from "./sandbox/tool-sandbox.js";
import { toolSandboxOf } from "./sandbox/choose-tool-sandbox.js";
import { toolSources } from "./sources.js";
import type { ToolSet } from "./tool-set.js";
import { entriesOf } from "./tools-file.js";

/** The built-ins, `run_command` last among them when enabled (confined by `sandbox`). */
export function configuredTools(
  config: Config,
  { sandbox = toolSandboxOf(config) }: { sandbox?: ToolSandbox } = {},
): Tool[] {
  const { tools } = config;
  const command = tools.runCommand
    ? [createRunCommandTool({ timeoutMs: tools.timeoutMs, env: tools.runCommand.env, sandbox })]
    : [];
  return [...createBuiltinTools(), ...command];
}

/** The tool sets of `TOOLS_FILE`'s sources, in the order of `TOOL_SOURCES` (not started). */
export function createToolSets(
  config: Config,
  { sandbox, log, onRestart }: { sandbox: ToolSandbox; log: Logger; onRestart: (server: string) => void },
): Promise<ToolSet[]> {
  const { tools } = config;
  const deps = {
    defaultTimeoutMs: tools.timeoutMs,
    biggestResultChars: Math.max(tools.resultMaxChars, ...Object.values(tools.resultMaxCharsByTool)),
    sandbox,
    env: process.env,
    log,
    redact: createRedactor(config.secrets).text,
    onRestart,
  };
  return Promise.all(toolSources.map((source) => source.create(entriesOf(tools.file, source), deps)));
}

/** Tools with the result caps the configuration sets for them by name. */
export function withResultCaps(tools: Tool[], caps: Record<string, number>): Tool[] {
  return tools.map((tool) => (caps[tool.name] === undefined ? tool : { ...tool, maxResultChars: caps[tool.name] }));
}
