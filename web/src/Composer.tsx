import { useRef, useState } from "react";

/** What the model can be sent: images, PDFs and plain text (the API contract, "Images and documents"). */
const ACCEPTED = "image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain";

/** The message box: Enter sends, Shift+Enter breaks the line; files may go with a message; while a run goes (or waits), Cancel stops it on the server. */
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
  onSend: (text: string, files?: FileList) => Promise<void>;
  /** While a run goes: the message waits its turn on the server. */
  onQueue: (text: string) => Promise<void>;
  onCancel: () => Promise<void>;
}) {
  const [text, setText] = useState("");
  const [files, setFiles] = useState<FileList | null>(null);
  const picker = useRef<HTMLInputElement>(null);
  const clearFiles = () => {
    setFiles(null);
    if (picker.current) picker.current.value = "";
  };
  const submit = () => {
    const t = text.trim();
    // Files go with a message that starts a run; a queued message is text.
    const attached = !busy && files && files.length > 0 ? detached(files) : undefined;
    if (!t && !attached) return;
    setText("");
    clearFiles();
    void (busy ? onQueue(t) : onSend(t, attached));
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
        placeholder={
          paused
            ? "A new message replaces the calls that wait (they are not run)…"
            : busy
              ? "The agent is working: a message now waits its turn…"
              : "Message the agent…"
        }
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            submit();
          }
        }}
      />
      <div className="composer-actions">
        <input
          ref={picker}
          type="file"
          multiple
          accept={ACCEPTED}
          aria-label="Attach files"
          hidden
          onChange={(e) => setFiles(e.target.files)}
        />
        {!busy && (
          <button
            type="button"
            onClick={() => picker.current?.click()}
            title="Images (PNG, JPEG, GIF, WebP), PDFs and text files, sent with the message"
          >
            Attach
          </button>
        )}
        {files && files.length > 0 && (
          <span className="muted small">
            {[...files].map((f) => f.name).join(", ")}{" "}
            <button type="button" className="link" onClick={clearFiles}>
              remove
            </button>
          </span>
        )}
        {canCancel && (
          <button type="button" className="danger" onClick={() => void onCancel()}>
            Cancel run
          </button>
        )}
        <button
          type="submit"
          className="primary"
          disabled={text.trim() === "" && !(files && files.length > 0 && !busy)}
        >
          {busy ? "Queue" : "Send"}
        </button>
      </div>
    </form>
  );
}

/** A copy of the input's files: its own list is live, and emptied when the input is cleared, before the message has read them. */
function detached(files: FileList): FileList {
  const copy = new DataTransfer();
  for (const file of files) copy.items.add(file);
  return copy.files;
}
