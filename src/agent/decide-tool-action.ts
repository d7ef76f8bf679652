import type { ToolRegistry } from "../tools/tool-registry.js";
import type { ToolCallBlock } from "../core/messages.js";
import type { ToolAction } from "../core/run-outcome.js";


/**
 * Decides, for each call a step proposes, whether the server runs it at once
 * or the run pauses for the application: a client tool's output must be
 * submitted; a call to a tool the conversation lists in `approvalRequired`,
 * or whose own rule says so for this input, must be approved. A call the
 * executor would refuse anyway (unknown tool, arguments that are not JSON or
 * do not parse, a client tool's call included) is not worth a person's time:
 * it runs, and the model reads the error. A rule that throws asks.
 */
export function createToolActionDecider({
  registry,
  allowedTools,
  clientTools,
  approvalRequired,
}: {
  registry: ToolRegistry;
  allowedTools: readonly string[];
  clientTools: readonly string[];
  approvalRequired: readonly string[];
}): (call: ToolCallBlock) => ToolAction {
  const client = new Set(clientTools);
  const allowed = new Set(allowedTools);
  const listed = new Set(approvalRequired);
  return (call) => {
    if (call.raw_arguments !== undefined) return "run";
    if (client.has(call.name)) return "submit_output";
    const tool = allowed.has(call.name) ? registry.get(call.name) : undefined;
    if (!tool) return "run";
    const parsed = tool.input.safeParse(call.input);
    if (!parsed.success) return "run";
    if (listed.has(call.name)) return "approve";
    try {
      return tool.needsApproval(parsed.data, { toolCallId: call.id }) ? "approve" : "run";
    } catch {
      // A rule that fails cannot say the call is harmless: a person decides.
      return "approve";
    }
  };
}
