import { finishToolSpec } from "../agent/finish-tool.js";
import type { FinishOptions } from "../core/run-settings.js";
import type { Services } from "../services.js";
import type { ConversationRow } from "../store/schema.js";
import { createToolBox, type ToolBox } from "../tools/tool-box.js";
import { toolsOfTenant } from "../tools/tools-of-tenant.js";
import type { ImageKeeper } from "../tools/define-tool.js";

/** A conversation's tools for one run (or for what its next call would be sent): its own, its client's, and `finish` when the run ends with one. */
export function toolBoxOf({
  services: { registry, config },
  conversation,
  finish,
  runId = null,
  keepImages,
}: {
  services: Pick<Services, "registry" | "config">;
  conversation: Pick<ConversationRow, "id" | "tenantId" | "tools" | "clientTools" | "approvalRequired">;
  finish: FinishOptions | null;
  /** The run whose calls these are (tools that call out say so). @default none */
  runId?: string | null;
  /** What keeps the images the tools return (a run's); absent: they are described. */
  keepImages?: ImageKeeper | undefined;
}): ToolBox {
  return createToolBox({
    // The tenant's view: a tool it may not use (run_command outside RUN_COMMAND_TENANTS) is unknown to its runs, whatever the conversation saved.
    registry: toolsOfTenant(registry, {
      tenant: conversation.tenantId,
      commandTenants: config.tools.sandbox.runCommandTenants,
    }),
    allowedTools: conversation.tools,
    clientTools: conversation.clientTools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.input_schema,
    })),
    approvalRequired: conversation.approvalRequired,
    loopTools: finish ? [finishToolSpec(finish)] : [],
    workspaceDir: config.tools.workspaceDir,
    place: { conversationId: conversation.id, runId, keepImages },
    defaultTimeoutMs: config.tools.timeoutMs,
    concurrency: config.tools.concurrency,
    maxResultChars: config.tools.resultMaxChars,
  });
}
