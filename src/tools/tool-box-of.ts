import type { Config } from "../config.js";
import type { ToolSpec } from "../core/model-provider.js";
import type { ImageKeeper, Tool } from "./define-tool.js";
import { createToolBox, type ToolBox } from "./tool-box.js";
import type { ToolRegistry } from "./tool-registry.js";
import { toolsOfTenant } from "./tools-of-tenant.js";
import { withTools } from "./with-tools.js";

/** What of a conversation says which tools its runs get. */
export interface ConversationTools {
  id: string;
  tenantId: string;
  tools: readonly string[];
  clientTools: readonly { name: string; description: string; input_schema: Record<string, unknown> }[];
  approvalRequired: readonly string[];
}

/** A conversation's tools for one run (or for what its next call would be sent): its own, its client's, and the loop's (`finish`, when the run ends with one). */
export function toolBoxOf({
  registry,
  settings,
  conversation,
  loopTools = [],
  runId = null,
  keepImages,
  ownTools = [],
}: {
  registry: ToolRegistry;
  /** The tools' settings (`config.tools`). */
  settings: Config["tools"];
  conversation: ConversationTools;
  /** @default none */
  loopTools?: readonly ToolSpec[];
  /** The run whose calls these are (tools that call out say so). @default none */
  runId?: string | null;
  /** What keeps the images the tools return (a run's); absent: they are described. */
  keepImages?: ImageKeeper | undefined;
  /** Tools of this run alone, offered after the conversation's (its calls of agents, `agentTools`). @default none */
  ownTools?: readonly Tool[];
}): ToolBox {
  return createToolBox({
    // The tenant's view: a tool it may not use (run_command outside RUN_COMMAND_TENANTS) is unknown to its runs, whatever the conversation saved.
    registry: withTools(
      toolsOfTenant(registry, {
        tenant: conversation.tenantId,
        commandTenants: settings.sandbox.runCommandTenants,
      }),
      ownTools,
    ),
    allowedTools: [...conversation.tools, ...ownTools.map((t) => t.name)],
    clientTools: conversation.clientTools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.input_schema,
    })),
    approvalRequired: conversation.approvalRequired,
    loopTools,
    workspaceDir: settings.workspaceDir,
    place: { conversationId: conversation.id, runId, keepImages },
    defaultTimeoutMs: settings.timeoutMs,
    concurrency: settings.concurrency,
    maxResultChars: settings.resultMaxChars,
  });
}
