import { isCommandTool, type Tool } from "./define-tool.js";
import type { ToolRegistry } from "./tool-registry.js";

/**
 * The tools as one tenant sees them: without `run_command` (the tools of
 * source `command`) when `commandTenants` (`RUN_COMMAND_TENANTS`) does not
 * list the tenant. Hidden, it is an unknown tool everywhere: not listed, not
 * accepted in a conversation's `tools`, never offered to the model nor run
 * (a call to it is answered as a call to an unknown tool), whatever a
 * conversation saved before the list changed.
 */
export function toolsOfTenant(
  registry: ToolRegistry,
  { tenant, commandTenants }: { tenant: string; commandTenants: readonly string[] | null },
): ToolRegistry {
  if (commandTenants === null || commandTenants.includes(tenant)) return registry;
  const hidden = (name: string) => {
    const tool = registry.get(name);
    return tool !== undefined && isCommandTool(tool);
  };
  const visible = (tool: Tool) => !isCommandTool(tool);
  return {
    ...registry,
    get: (name) => (hidden(name) ? undefined : registry.get(name)),
    has: (name) => !hidden(name) && registry.has(name),
    names: () => registry.names().filter((name) => !hidden(name)),
    all: () => registry.all().filter(visible),
    specs: (names) => registry.specs((names ?? registry.names()).filter((name) => !hidden(name))),
    resolve: (names) => registry.resolve(names).filter((name) => !hidden(name)),
    accepts: (name) => !hidden(name) && registry.accepts(name),
  };
}
