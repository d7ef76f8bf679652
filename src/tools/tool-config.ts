import path from "node:path";
import { z } from "zod";
import { booleanFromEnv, blank, intFromEnv, optionalString } from "../util/env-values.js";
import { createBuiltinTools } from "./builtin/index.js";
import { MAX_TOOL_RESULT_CHARS } from "./clip-tool-result.js";
import { commandEnvOf } from "./command/run-command.js";
import { DEFAULT_TOOL_CONCURRENCY, DEFAULT_TOOL_TIMEOUT_MS } from "./execute-tool-calls.js";
import { sandboxSettingsOf } from "./sandbox/sandbox-config.js";
import { emptyToolsFile, loadToolsFile, type ToolsFile } from "./tools-file.js";

/** The variables of the tools (composed into config.ts's). */
export const toolVariables = {
  TOOL_TIMEOUT_MS: intFromEnv(DEFAULT_TOOL_TIMEOUT_MS),
  TOOL_CONCURRENCY: intFromEnv(DEFAULT_TOOL_CONCURRENCY),
  TOOL_RESULT_MAX_CHARS: intFromEnv(MAX_TOOL_RESULT_CHARS, { min: 256 }),
  /** `read_file=32000,search_files=8000`: caps of single tools, over the tool's own and the default. */
  TOOL_RESULT_MAX_CHARS_BY_TOOL: z.preprocess(
    (v) => (v === undefined || v === "" ? {} : v),
    z
      .union([
        z.record(z.string(), z.number()),
        z
          .string()
          .regex(
            /^\s*[\w-]+\s*=\s*\d+\s*(,\s*[\w-]+\s*=\s*\d+\s*)*$/,
            "must read like read_file=32000,search_files=8000",
          )
          .transform((s) =>
            Object.fromEntries(
              s
                .split(",")
                .map((pair) => pair.split("=").map((x) => x.trim()))
                .map(([name, chars]) => [name!, Number(chars)]),
            ),
          ),
      ])
      .pipe(z.record(z.string(), z.number().int().min(256))),
  ),
  TOOLS_FILE: optionalString,
  ENABLE_RUN_COMMAND: booleanFromEnv("false"),
  /** `NODE_ENV,MY_TOOL_HOME`: variables run_command's commands get besides PATH, HOME and LANG. */
  RUN_COMMAND_ENV: z.preprocess(
    (v) => (blank(v) ? "" : v),
    z
      .string()
      .regex(
        /^\s*([A-Za-z_][A-Za-z0-9_]*\s*(,\s*[A-Za-z_][A-Za-z0-9_]*\s*)*)?$/,
        "must be variable names separated by commas",
      )
      .transform((s) =>
        s
          .split(",")
          .map((n) => n.trim())
          .filter(Boolean),
      ),
  ),
  WORKSPACE_DIR: z.string().min(1).default("./workspace"),
};

type ToolValues = z.output<z.ZodObject<typeof toolVariables>> & Parameters<typeof sandboxSettingsOf>[0];

/** `TOOLS_FILE`, read and checked; a problem of the file is its own line (ToolsFileError, thrown through the parse). */
export const toolsFileOf = (e: Pick<ToolValues, "TOOLS_FILE">, raw: Record<string, unknown>): ToolsFile =>
  e.TOOLS_FILE
    ? loadToolsFile(e.TOOLS_FILE, { env: raw, taken: createBuiltinTools().map((t) => t.name) })
    : emptyToolsFile();

/** The tools' settings: limits, the workspace, the sources of `TOOLS_FILE`, `run_command` and its sandbox. */
export const toolSettingsOf = (e: ToolValues, raw: Record<string, unknown>, toolsFile: ToolsFile) => ({
  timeoutMs: e.TOOL_TIMEOUT_MS,
  /** How many read-only tool calls of one model response may run at once. */
  concurrency: e.TOOL_CONCURRENCY,
  /** Tool results longer than this are clipped (head and tail kept, the cut saying how much), unless their tool has a cap of its own. */
  resultMaxChars: e.TOOL_RESULT_MAX_CHARS,
  /** Caps of single tools, by name (config wins over the tool's own). */
  resultMaxCharsByTool: e.TOOL_RESULT_MAX_CHARS_BY_TOOL,
  /** The folder the file tools are confined to. */
  workspaceDir: path.resolve(e.WORKSPACE_DIR),
  /** The sources of tools configured in `TOOLS_FILE`: each one's entries under its key (tools/sources.ts). */
  file: toolsFile,
  /** `run_command`, when enabled: the environment its commands get. */
  runCommand: e.ENABLE_RUN_COMMAND === "true" ? { env: commandEnvOf(raw, e.RUN_COMMAND_ENV) } : null,
  /** Where `run_command` and the programs of `TOOLS_FILE`'s sources run, and who is offered `run_command`. */
  sandbox: sandboxSettingsOf(e, raw),
});
