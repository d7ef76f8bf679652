import { isToolUIPart } from "ai";
import type { Answers, ChatMessage } from "./chat-types.ts";
import { FilePart } from "./FilePart.tsx";
import { ToolCall } from "./ToolCall.tsx";

const STATUS_LABELS: Record<string, string> = {
  requires_action: "waiting for you",
  waiting: "waiting out a provider outage",
  completed: "completed",
  incomplete: "incomplete",
  failed: "failed",
  cancelled: "cancelled",
  running: "running",
  queued: "queued",
};

const tokens = (n: number) => (n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : String(n));

/** One UI message: the user's text, or a run's answer with its steps, text, tool calls, notices and how it ended. */
export function MessageView({
  message,
  streaming,
  answers,
  onTrace,
  onFork,
  traceOpen,
  fetchBlob,
}: {
  message: ChatMessage;
  /** This message's run is streaming now. */
  streaming: boolean;
  answers: Answers;
  onTrace: (runId: string) => void;
  /** A new conversation from this point (absent while it is not saved yet). */
  onFork: (() => void) | undefined;
  traceOpen: boolean;
  /** Reads a file of loopd's with the key (a stored attachment). */
  fetchBlob: (path: string) => Promise<Blob>;
}) {
  if (message.role === "user") {
    const text = message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
    const files = message.parts.filter((p) => p.type === "file");
    return (
      <article className="message user" aria-label="Your message">
        <div className="sent">
          {files.length > 0 && (
            <div className="attachments">
              {files.map((part, i) => (
                <FilePart key={i} part={part} fetchBlob={fetchBlob} />
              ))}
            </div>
          )}
          {text && <div className="bubble">{text}</div>}
        </div>
        {onFork && (
          <button
            type="button"
            className="link fork"
            onClick={onFork}
            title="A new conversation with everything before this message, to send it another way"
          >
            Fork from here
          </button>
        )}
      </article>
    );
  }
  const meta = message.metadata;
  const waiting = !streaming && meta?.status === "requires_action";
  let steps = 0;
  return (
    <article
      className="message assistant"
      aria-label="Answer"
      data-run-id={meta?.run_id ?? message.id}
      aria-busy={streaming}
    >
      {message.parts.map((part, i) => {
        if (part.type === "step-start") return steps++ > 0 ? <hr key={i} className="step-divider" /> : null;
        if (part.type === "text")
          return (
            <div key={i} className="text">
              {part.text}
            </div>
          );
        if (part.type === "data-notice")
          return (
            <p key={i} className="notice">
              {part.data.text}
            </p>
          );
        if (isToolUIPart(part))
          return <ToolCall key={part.toolCallId} part={part} waiting={waiting} answers={answers} />;
        return null;
      })}
      {streaming && <span className="cursor" aria-label="streaming" />}
      <footer className="run-line">
        {meta?.status ? (
          <span className={`badge status-${meta.status}`}>{STATUS_LABELS[meta.status] ?? meta.status}</span>
        ) : (
          streaming && <span className="badge status-running">running</span>
        )}
        {meta?.stop_reason && <span className="muted">{meta.stop_reason}</span>}
        {meta?.usage && (
          <span className="muted" title="input / output tokens">
            {tokens(meta.usage.input_tokens)} in · {tokens(meta.usage.output_tokens)} out
            {meta.usage.cost_usd != null && ` · $${meta.usage.cost_usd.toFixed(4)}`}
          </span>
        )}
        <button
          type="button"
          className="link"
          aria-pressed={traceOpen}
          onClick={() => onTrace(meta?.run_id ?? message.id)}
        >
          Trace
        </button>
        {onFork && (
          <button
            type="button"
            className="link fork"
            onClick={onFork}
            title="A new conversation with everything up to this answer"
          >
            Fork from here
          </button>
        )}
      </footer>
    </article>
  );
}
