import type { ToolRegistry } from "../tools/tool-registry.js";
import { finishToolSpec } from "./finish-tool.js";
import { type FinishOptions } from "../core/run-settings.js";
import type { ToolSpec } from "../core/model-provider.js";

/** The tools a conversation's model calls offer: its registered tools, its client tools, and `finish` when asked for. */
export function offeredTools({
  registry,
  allowedTools,
  clientTools = [],
  finish = null,
}: {
  registry: ToolRegistry;
  allowedTools: readonly string[];
  clientTools?: readonly ToolSpec[];
  finish?: FinishOptions | null;
}): ToolSpec[] {
  return [...registry.specs(allowedTools.filter((name) => registry.has(name))), ...clientTools, ...(finish ? [finishToolSpec(finish)] : [])];
}
