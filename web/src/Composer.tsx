import { useState } from "react";

/** The message box: Enter sends, Shift+Enter breaks the line; while a run goes (or waits), Cancel stops it on the server. */
export function Composer({
  busy,
  paused,
  canCancel,
  onSend,
  onQueue,
  onCancel,
}: {
  busy: boolean;
  paused: boolean;
  canCancel: boolean;
  onSend: (text: string) => Promise<void>;
  /** While a run goes: the message waits its turn on the server. */
  onQueue: (text: string) => Promise<void>;
  onCancel: () => Promise<void>;
}) {
  const [text, setText] = useState("");
  const submit = () => {
    const t = text.trim();
    if (!t) return;
    setText("");
    void (busy ? onQueue(t) : onSend(t));
  };
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <textarea
        aria-label="Message"
        rows={2}
        value={text}
        placeholder={paused ? "A new message replaces the calls that wait (they are not run)…" : busy ? "The agent is working: a message now waits its turn…" : "Message the agent…"}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            submit();
          }
        }}
      />
      <div className="composer-actions">
        {canCancel && (
          <button type="button" className="danger" onClick={() => void onCancel()}>
            Cancel run
          </button>
        )}
        <button type="submit" className="primary" disabled={text.trim() === ""}>
          {busy ? "Queue" : "Send"}
        </button>
      </div>
    </form>
  );
}
