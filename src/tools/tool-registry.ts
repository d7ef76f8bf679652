import type { ToolSpec } from "../core/model-provider.js";
import { isCommandTool, sourceOf, type Tool } from "./define-tool.js";
import { perObject } from "../util/per-object.js";
import type { ToolSet } from "./tool-set.js";

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
  /** A conversation's `tools` as the names they stand for now: `fs__*` is every tool of the server `fs` at this moment. */
  resolve(names: readonly string[]): string[];
  /** Whether a conversation may name it: a registered tool, or what the changing tools accept (`fs__*`). */
  accepts(name: string): boolean;
  /** Where a registered tool comes from; undefined for any other name. */
  describe(name: string): ToolOrigin | undefined;
  /** A conversation's `tools` when it names none: every tool but `run_command`, and the changing tools' own (`fs__*`). */
  defaults(): string[];
}

/** Where a tool comes from, for metrics and traces. */
export interface ToolOrigin {
  /** `builtin`, `command`, or a `TOOLS_FILE` source's key (`TOOL_ORIGINS`). */
  source: string;
  server: string | null;
}

/**
 * The fixed tools, then the tool sets' (their tools come and go). Throws on duplicate names among
 * the fixed: two tools with one name is a wiring bug; a changing tool with
 * a name already taken is left out (the configuration keeps names apart).
 */
export function createToolRegistry(tools: Tool[], toolSets: readonly ToolSet[] = []): ToolRegistry {
  const fixed = new Map<string, Tool>();
  for (const tool of tools) {
    if (fixed.has(tool.name)) throw new Error(`duplicate tool name: ${tool.name}`);
    fixed.set(tool.name, tool);
  }
  // Each set's version only goes up: their sum changes whenever one of them does.
  const changing = toolSets.length === 0 ? undefined : combined(toolSets);
  let seen = -1;
  let byName = fixed;
  const current = (): Map<string, Tool> => {
    if (!changing || changing.version() === seen) return byName;
    seen = changing.version();
    byName = new Map(fixed);
    for (const tool of changing.tools()) if (!byName.has(tool.name)) byName.set(tool.name, tool);
    return byName;
  };
  // One spec per tool, shared by every run that offers it (the providers make their tool params once per spec).
  const specOf = perObject((tool: Tool): ToolSpec => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  }));

  return {
    get: (name) => current().get(name),
    has: (name) => current().has(name),
    names: () => [...current().keys()],
    all: () => [...current().values()],
    specs(names) {
      const wanted = names === undefined ? undefined : new Set(names);
      return [...current().values()].filter((tool) => wanted?.has(tool.name) ?? true).map(specOf);
    },
    resolve(names) {
      const wildcards = names.flatMap((name) => changing?.wildcard(name) ?? []);
      if (wildcards.length === 0) return [...names];
      const expanded = [...current().values()].filter((t) => wildcards.some((covers) => covers(t))).map((t) => t.name);
      return [...new Set([...names.filter((name) => !changing?.wildcard(name)), ...expanded])];
    },
    describe(name) {
      const tool = current().get(name);
      return tool && { source: sourceOf(tool), server: tool.server ?? null };
    },
    accepts: (name) => current().has(name) || (changing?.accepts(name) ?? false),
    defaults: () => [
      ...[...fixed.values()].filter((t) => !isCommandTool(t)).map((t) => t.name),
      ...(changing?.defaults() ?? []),
    ],
  };
}

const combined = (
  sets: readonly ToolSet[],
): Pick<ToolSet, "tools" | "version" | "accepts" | "defaults" | "wildcard"> => ({
  tools: () => sets.flatMap((s) => s.tools()),
  version: () => sets.reduce((sum, s) => sum + s.version(), 0),
  accepts: (name) => sets.some((s) => s.accepts(name)),
  defaults: () => sets.flatMap((s) => s.defaults()),
  wildcard: (name) => sets.map((s) => s.wildcard(name)).find((covers) => covers !== null) ?? null,
});
