import type { ToolSpec } from "../core/model-provider.js";
import type { Tool } from "./define-tool.js";

export interface ToolRegistry {
  get(name: string): Tool | undefined;
  /** Registered names, in registration order. */
  names(): string[];
  /**
   * What the model is told about the tools, in registration order (stable, so
   * the provider's prompt cache keeps hitting). With `names`, only those tools;
   * a name that is not registered is skipped: the executor will answer a call
   * to it as an unknown tool.
   */
  specs(names?: string[]): ToolSpec[];
  has(name: string): boolean;
  /** Every registered tool, in registration order. */
  all(): Tool[];
}

/** Throws on duplicate names: two tools with one name is a wiring bug. */
export function createToolRegistry(tools: Tool[]): ToolRegistry {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`duplicate tool name: ${tool.name}`);
    byName.set(tool.name, tool);
  }
  const specOf = (tool: Tool): ToolSpec => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  });

  return {
    get: (name) => byName.get(name),
    has: (name) => byName.has(name),
    names: () => [...byName.keys()],
    all: () => [...byName.values()],
    specs(names) {
      const wanted = names === undefined ? undefined : new Set(names);
      return [...byName.values()].filter((tool) => wanted?.has(tool.name) ?? true).map(specOf);
    },
  };
}
