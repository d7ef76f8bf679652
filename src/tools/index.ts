export { createBuiltinTools } from "./builtin/index.js";
export { clipToolResult, MAX_TOOL_RESULT_CHARS } from "./clip-tool-result.js";
export { defineTool, type Tool, type ToolContext } from "./define-tool.js";
export { DEFAULT_TOOL_TIMEOUT_MS, executeToolCalls, type ToolCallOutcome } from "./execute-tool-calls.js";
export { resolveInWorkspace, type WorkspacePath } from "./resolve-in-workspace.js";
export { createToolRegistry, type ToolRegistry } from "./tool-registry.js";
