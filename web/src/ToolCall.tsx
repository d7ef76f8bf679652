import { getToolName } from "ai";
import { useState } from "react";
import type { Answers, ToolPart } from "./chat-types.ts";

/** A tool's output as loopd sends it (a string, often JSON): shown pretty when it is JSON. */
function pretty(value: unknown): string {
  if (typeof value !== "string") return JSON.stringify(value, null, 2);
  try {
    return JSON.stringify(JSON.parse(value), null, 2);
  } catch {
    return value;
  }
}

const LABELS: Record<ToolPart["state"], string> = {
  "input-streaming": "preparing",
  "input-available": "running",
  "approval-requested": "needs approval",
  "approval-responded": "answered",
  "output-available": "done",
  "output-error": "error",
  "output-denied": "denied",
};

/**
 * One tool call, folded: its name and state; opened, its input and result
 * (an error result marked). A call waiting for a person shows its card open:
 * approve or deny (with a reason), or, for a client tool, a form for its output.
 */
export function ToolCall({ part, waiting, answers }: { part: ToolPart; waiting: boolean; answers: Answers }) {
  const name = getToolName(part);
  const needsOutput = waiting && part.state === "input-available";
  const label = needsOutput ? "needs output" : LABELS[part.state];
  const attention = part.state === "approval-requested" || needsOutput || part.state === "output-error";
  return (
    <details
      className={`tool state-${part.state}${needsOutput ? " state-needs-output" : ""}`}
      open={attention}
      data-tool-call-id={part.toolCallId}
    >
      <summary>
        <span className="tool-name">{name}</span>
        <span
          className={`badge ${part.state === "output-error" || part.state === "output-denied" ? "bad" : attention ? "warn" : ""}`}
        >
          {label}
        </span>
      </summary>
      <div className="tool-body">
        <div className="label">Input</div>
        <pre>{pretty(part.input ?? {})}</pre>
        {part.state === "output-available" && (
          <>
            <div className="label">Result</div>
            <pre className="result">{pretty(part.output)}</pre>
          </>
        )}
        {part.state === "output-error" && (
          <>
            <div className="label">Error</div>
            <pre className="result error-text">{part.errorText}</pre>
          </>
        )}
        {part.state === "output-denied" && (
          <p className="muted">Denied{part.approval?.reason ? `: ${part.approval.reason}` : ""}. The model was told.</p>
        )}
        {part.state === "approval-responded" && (
          <p className="muted">{part.approval.approved ? "Approved" : "Denied"}; sending…</p>
        )}
        {part.state === "approval-requested" && <ApprovalCard approvalId={part.approval.id} answers={answers} />}
        {needsOutput && <OutputForm tool={name} toolCallId={part.toolCallId} answers={answers} />}
      </div>
    </details>
  );
}

function ApprovalCard({ approvalId, answers }: { approvalId: string; answers: Answers }) {
  const [reason, setReason] = useState("");
  return (
    <div className="card approval">
      <p>This call waits for your approval.</p>
      <input
        aria-label="Reason (optional)"
        placeholder="Reason (optional, sent to the model)"
        value={reason}
        onChange={(e) => setReason(e.target.value)}
      />
      <div className="actions">
        <button
          type="button"
          className="primary"
          onClick={() => answers.approve(approvalId, true, reason.trim() || undefined)}
        >
          Approve
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => answers.approve(approvalId, false, reason.trim() || undefined)}
        >
          Deny
        </button>
      </div>
    </div>
  );
}

function OutputForm({ tool, toolCallId, answers }: { tool: string; toolCallId: string; answers: Answers }) {
  const [output, setOutput] = useState("");
  const [isError, setIsError] = useState(false);
  return (
    <form
      className="card client-output"
      onSubmit={(e) => {
        e.preventDefault();
        answers.output(tool, toolCallId, output, isError);
      }}
    >
      <p>
        <strong>{tool}</strong> is a client tool: you run it, and send back what it returned.
      </p>
      <textarea
        aria-label="Tool output"
        rows={3}
        value={output}
        onChange={(e) => setOutput(e.target.value)}
        placeholder="What the tool returned"
        required
      />
      <div className="actions">
        <label className="check">
          <input type="checkbox" checked={isError} onChange={(e) => setIsError(e.target.checked)} /> it failed
        </label>
        <button type="submit" className="primary">
          Send output
        </button>
      </div>
    </form>
  );
}
