import { useState } from "react";

/** The message box: Enter sends, Shift+Enter breaks the line; while a run goes (or waits), Cancel stops it on the server. */
export function Composer({
  busy,
  paused,
  canCancel,
  onSend,
  onCancel,
}: {
  busy: boolean;
  paused: boolean;
  canCancel: boolean;
  onSend: (text: string) => Promise<void>;
  onCancel: () => Promise<void>;
}) {
  const [text, setText] = useState("");
  const submit = () => {
    const t = text.trim();
    if (!t || busy) return;
    setText("");
    void onSend(t);
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
        placeholder={paused ? "A new message replaces the calls that wait (they are not run)…" : "Message the agent…"}
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
        <button type="submit" className="primary" disabled={busy || text.trim() === ""}>
          Send
        </button>
      </div>
    </form>
  );
}
