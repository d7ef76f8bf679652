import { useState } from "react";
import type { Api, ApiError, Conversation } from "./api.ts";
import { NewConversation } from "./NewConversation.tsx";

const when = (iso: string) => {
  const d = new Date(iso);
  return d.toDateString() === new Date().toDateString()
    ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleDateString();
};

export const titleOf = (c: Pick<Conversation, "id" | "title">) => c.title ?? `Conversation ${c.id.slice(-6)}`;

/** The caller's conversations, newest first: open one, start one, delete one (a second click confirms). */
export function ConversationList({
  api,
  conversations,
  error,
  openId,
  onOpen,
  onChanged,
}: {
  api: Api;
  conversations: Conversation[] | null;
  error: ApiError | null;
  openId: string | null;
  onOpen: (id: string | null) => void;
  onChanged: () => Promise<void>;
}) {
  const [confirming, setConfirming] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const remove = async (id: string) => {
    if (confirming !== id) return setConfirming(id);
    setConfirming(null);
    try {
      await api.deleteConversation(id);
      if (id === openId) onOpen(null);
      await onChanged();
    } catch (err) {
      setProblem(String((err as Error).message));
    }
  };

  return (
    <nav className="conversations" aria-label="Conversations">
      <NewConversation
        api={api}
        onCreated={async (c) => {
          await onChanged();
          onOpen(c.id);
        }}
      />
      {(error || problem) && <p className="error">{error?.message ?? problem}</p>}
      {conversations === null && !error && <p className="muted pad">Loading…</p>}
      {conversations?.length === 0 && <p className="muted pad">No conversations yet.</p>}
      <ul>
        {conversations?.map((c) => (
          <li key={c.id} className={c.id === openId ? "active" : undefined}>
            <button
              type="button"
              className="conversation"
              onClick={() => onOpen(c.id)}
              aria-current={c.id === openId ? "page" : undefined}
            >
              <span className="title">{titleOf(c)}</span>
              <span className="meta">
                {c.active_run_id && <span className="dot" title="a run is open" />}
                {c.message_count} messages · {c.agent ? `${c.agent.name}@${c.agent.version}` : c.provider} ·{" "}
                {when(c.updated_at)}
              </span>
            </button>
            <button
              type="button"
              className={confirming === c.id ? "delete confirm" : "delete"}
              aria-label={`Delete ${titleOf(c)}`}
              onClick={() => void remove(c.id)}
              onBlur={() => setConfirming((x) => (x === c.id ? null : x))}
            >
              {confirming === c.id ? "Delete?" : "×"}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
