import type { Tool } from "./define-tool.js";
import type { ToolRegistry } from "./tool-registry.js";

/**
 * The registry with one run's own tools after its tools (a conversation's
 * calls of agents): they are offered and run as any other, and exist only
 * for the runs that made them. A name the registry already has keeps its tool.
 */
export function withTools(registry: ToolRegistry, tools: readonly Tool[]): ToolRegistry {
  const own = new Map(tools.filter((t) => !registry.has(t.name)).map((t) => [t.name, t]));
  if (own.size === 0) return registry;
  const specOf = (t: Tool) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema });
  return {
    ...registry,
    get: (name) => registry.get(name) ?? own.get(name),
    has: (name) => registry.has(name) || own.has(name),
    names: () => [...registry.names(), ...own.keys()],
    all: () => [...registry.all(), ...own.values()],
    specs: (names) => [
      ...registry.specs(names),
      ...[...own.values()].filter((t) => names === undefined || names.includes(t.name)).map(specOf),
    ],
    resolve: (names) => [...registry.resolve(names.filter((n) => !own.has(n))), ...names.filter((n) => own.has(n))],
    accepts: (name) => registry.accepts(name) || own.has(name),
  };
}
