import type { PendingToolCall } from "../core/run-outcome.js";
import { AppError } from "../errors.js";

export interface ApprovalAnswer {
  tool_call_id: string;
  approve: boolean;
  reason?: string | undefined;
}

export interface OutputAnswer {
  tool_call_id: string;
  output: string;
  is_error: boolean;
}

/**
 * An answer must settle every pending call exactly once, each with the kind
 * of answer it waits for: an approval for a call to approve, an output for a
 * client tool's call. Anything else is a 400 naming the ids at fault.
 */
export function checkActionAnswer(
  pending: readonly PendingToolCall[],
  { approvals, outputs }: { approvals: ApprovalAnswer[]; outputs: OutputAnswer[] },
): void {
  const actionOf = new Map(pending.map((call) => [call.tool_call_id, call.action]));
  const answered = [
    ...approvals.map((a) => [a.tool_call_id, "approve"] as const),
    ...outputs.map((o) => [o.tool_call_id, "submit_output"] as const),
  ];
  const seen = new Set<string>();
  const problems = {
    unknown: [] as string[],
    duplicated: [] as string[],
    wrong_kind: [] as string[],
    missing: [] as string[],
  };
  for (const [id, kind] of answered) {
    if (seen.has(id)) problems.duplicated.push(id);
    seen.add(id);
    const action = actionOf.get(id);
    if (action === undefined) problems.unknown.push(id);
    else if (action !== kind) problems.wrong_kind.push(id);
  }
  problems.missing = pending.map((c) => c.tool_call_id).filter((id) => !seen.has(id));
  const faults = Object.entries(problems).filter(([, ids]) => ids.length > 0);
  if (faults.length === 0) return;
  const says: Record<string, string> = {
    unknown: "not a call this run waits on",
    duplicated: "answered more than once",
    wrong_kind: "answered with the wrong kind (approvals are for calls to approve, tool_outputs for client tools)",
    missing: "left unanswered: every pending call must be answered in one request",
  };
  throw new AppError("invalid_request", faults.map(([k, ids]) => `${ids.join(", ")}: ${says[k]}`).join("; "), {
    ...Object.fromEntries(faults),
    pending: pending.map(({ tool_call_id, name, action }) => ({ tool_call_id, name, action })),
  });
}
