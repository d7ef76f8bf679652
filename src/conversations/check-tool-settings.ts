import { FINISH_TOOL } from "../core/run-settings.js";
import { AppError } from "../errors.js";
import type { ClientTool } from "../store/schema.js";
import { coveredBy } from "../tools/mcp/mcp-tool-name.js";

/**
 * A conversation's approval list and client tools, checked against its
 * server tools: every tool that needs approval is one of them, and no
 * client tool shares a name with one (or with another client tool), or the
 * model would see two tools by one name. 400s name the tools at fault.
 */
export function checkToolSettings({
  tools,
  approvalRequired,
  clientTools,
}: {
  tools: string[];
  approvalRequired: string[];
  clientTools: ClientTool[];
}) {
  // `fs__*` covers every name the server fs may list, now or later.
  const covered = (name: string) => coveredBy(tools, name);
  const unknown = approvalRequired.filter((name) => !covered(name));
  if (unknown.length > 0) {
    throw new AppError(
      "invalid_request",
      `approval_required names ${unknown.map((n) => JSON.stringify(n)).join(", ")}, not among this conversation's tools (${tools.join(", ") || "none"})`,
      {
        field: "body.approval_required",
        unknown,
        tools,
      },
    );
  }
  const names = clientTools.map((t) => t.name);
  if (names.includes(FINISH_TOOL)) {
    throw new AppError(
      "invalid_request",
      `client_tools: "${FINISH_TOOL}" is loopd's own tool (the one that ends a run with a result); give yours another name`,
      {
        field: "body.client_tools",
        reserved: [FINISH_TOOL],
      },
    );
  }
  const clashing = [...new Set(names.filter((name, i) => covered(name) || names.indexOf(name) !== i))];
  if (clashing.length > 0) {
    throw new AppError(
      "invalid_request",
      `client_tools: ${clashing.map((n) => JSON.stringify(n)).join(", ")} clash with a server tool or with each other; each tool needs a name of its own`,
      {
        field: "body.client_tools",
        clashing,
      },
    );
  }
  return { approvalRequired: [...new Set(approvalRequired)], clientTools };
}
