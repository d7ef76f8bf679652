import { MAX_TOOL_RESULT_CHARS } from "../../src/tools/clip-tool-result.js";
import type { Tool } from "../../src/tools/define-tool.js";

/** Runs a tool the way the executor does: input parsed by its own schema, then execute. */
export async function runTool(
  tool: Tool,
  input: unknown,
  { workspaceDir = "/nonexistent", maxResultChars = MAX_TOOL_RESULT_CHARS } = {},
): Promise<unknown> {
  return tool.execute(tool.input.parse(input), {
    signal: new AbortController().signal,
    workspaceDir,
    maxResultChars,
    toolCallId: "call_1",
    conversationId: null,
    runId: null,
  });
}
