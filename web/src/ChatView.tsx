import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport } from "ai";
import { useEffect, useMemo, useRef, useState } from "react";
import { authHeaders, errorOf, type Api, type Conversation } from "./api.ts";
import { answeredAll, type Answers, type ChatMessage } from "./chat-types.ts";
import { titleOf } from "./ConversationList.tsx";
import { Composer } from "./Composer.tsx";
import { MessageView } from "./MessageView.tsx";
import { useFollowQueue } from "./follow-queue.ts";
import { QueuedRuns, useQueue } from "./QueuedRuns.tsx";

interface Props {
  api: Api;
  apiKey: string;
  conversationId: string;
  conversation: Conversation | null;
  onBack: () => void;
  onChanged: () => Promise<void>;
  /** Opens another conversation (a fork just made). */
  onOpen: (id: string) => void;
  onTrace: (runId: string, version: string) => void;
  traceRunId: string | null;
}

/** A conversation: its history read first (`GET /ui/chat/:id/messages`), then the chat on it. */
export function ChatView(props: Props) {
  const { api, conversationId } = props;
  const [seed, setSeed] = useState<ChatMessage[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api.uiMessages<ChatMessage>(conversationId).then(
      (messages) => live && setSeed(messages),
      (err: Error) => live && setProblem(err.message),
    );
    return () => void (live = false);
  }, [api, conversationId]);
  if (problem) return <div className="empty error">{problem}</div>;
  if (!seed) return <div className="empty muted">Loading the conversation…</div>;
  return <ChatSession {...props} seed={seed} />;
}

function ChatSession({
  api,
  apiKey,
  conversationId,
  conversation,
  onBack,
  onChanged,
  onOpen,
  onTrace,
  traceRunId,
  seed,
}: Props & { seed: ChatMessage[] }) {
  const transport = useMemo(
    () => new DefaultChatTransport<ChatMessage>({ api: "/ui/chat", headers: () => authHeaders(apiKey) }),
    [apiKey],
  );
  const chat = useChat<ChatMessage>({
    id: conversationId,
    messages: seed,
    transport,
    // After a reload, the open run's stream picks up from its start (GET /ui/chat/:id/stream).
    resume: true,
    sendAutomaticallyWhen: answeredAll,
    onFinish: () => void onChanged(),
  });
  const [cancelProblem, setCancelProblem] = useState<string | null>(null);
  const queue = useQueue(api, conversationId);
  useFollowQueue({ api, conversationId, chat, queue, onProblem: setCancelProblem });
  const busy = chat.status === "submitted" || chat.status === "streaming";
  const last = chat.messages.at(-1);
  const lastRun = last?.role === "assistant" ? (last.metadata?.run_id ?? last.id) : null;
  const paused = !busy && last?.role === "assistant" && last.metadata?.status === "requires_action";

  const scroller = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = scroller.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 160) el.scrollTop = el.scrollHeight;
  }, [chat.messages]);

  // An open trace follows its run: read again when the run's state changes (only then, hence the one dependency).
  const version = `${chat.messages.length}:${last?.metadata?.status ?? ""}:${chat.status}`;
  useEffect(() => {
    if (traceRunId && traceRunId === lastRun) onTrace(traceRunId, version);
  }, [version]);

  const answers: Answers = {
    approve: (id, approved, reason) => void chat.addToolApprovalResponse({ id, approved, ...(reason && { reason }) }),
    output: (tool, toolCallId, output, isError) =>
      void (isError
        ? chat.addToolOutput({ state: "output-error", tool, toolCallId, errorText: output })
        : chat.addToolOutput({ tool, toolCallId, output })),
  };

  const send = async (text: string, files?: FileList) => {
    const first = chat.messages.length === 0 && !conversation?.title;
    await chat.sendMessage(files && files.length > 0 ? { text, files } : { text });
    if (first)
      await api.renameConversation(conversationId, (text || files?.[0]?.name || "Files").slice(0, 60)).catch(() => {});
    await onChanged();
  };
  const cancel = async () => {
    setCancelProblem(null);
    if (!lastRun) return;
    await api.cancel(conversationId, lastRun).catch((err: Error) => setCancelProblem(err.message));
  };
  // A fork ends before a user message (to try it another way), or after an answer's run.
  const forkAt = async (index: number) => {
    setCancelProblem(null);
    try {
      const m = chat.messages[index]!;
      const history = await api.messages(conversationId);
      const runId = m.role === "user" ? chat.messages[index + 1]?.metadata?.run_id : (m.metadata?.run_id ?? m.id);
      const ofRun = history.filter((h) => h.run_id === runId).map((h) => h.seq);
      const own = history.find((h) => h.id === m.id)?.seq;
      const at = m.role === "user" ? (own ?? Math.min(...ofRun)) - 1 : Math.max(...ofRun);
      if (!Number.isFinite(at)) throw new Error("this message is not saved yet; fork once its run has ended");
      const fork = await api.fork(conversationId, at);
      await onChanged();
      onOpen(fork.id);
    } catch (err) {
      setCancelProblem((err as Error).message);
    }
  };
  const error = chat.error ? errorOf(0, chat.error.message) : null;

  return (
    <section className="chat" aria-label="Conversation">
      <div className="chat-head">
        <button type="button" className="back" onClick={onBack} aria-label="Back to the conversations">
          ←
        </button>
        <div>
          <h1>{conversation ? titleOf(conversation) : conversationId}</h1>
          {conversation && (
            <p className="muted small">
              {conversation.provider} · {conversation.model}
              {conversation.approval_required.length > 0 && ` · approval: ${conversation.approval_required.join(", ")}`}
              {conversation.client_tools.length > 0 &&
                ` · client tools: ${conversation.client_tools.map((t) => t.name).join(", ")}`}
            </p>
          )}
        </div>
      </div>
      <div className="messages" ref={scroller}>
        {chat.messages.length === 0 && <p className="muted pad">No messages yet. Ask something below.</p>}
        {chat.messages.map((m, i) => (
          <MessageView
            key={m.id}
            message={m}
            streaming={busy && i === chat.messages.length - 1}
            answers={answers}
            onTrace={(runId) => onTrace(runId, version)}
            onFork={busy && i >= chat.messages.length - 2 ? undefined : () => void forkAt(i)}
            traceOpen={traceRunId === (m.metadata?.run_id ?? m.id)}
            fetchBlob={api.blob}
          />
        ))}
        {chat.status === "submitted" && last?.role === "user" && <p className="muted pad">Waiting for the model…</p>}
        <QueuedRuns
          queued={queue.queued}
          onCancel={(runId) => void queue.cancel(runId).catch((err: Error) => setCancelProblem(err.message))}
        />
      </div>
      {(error || cancelProblem) && (
        <div className="error banner" role="alert">
          {error?.message ?? cancelProblem}
          <button type="button" className="link" onClick={() => (chat.clearError(), setCancelProblem(null))}>
            Dismiss
          </button>
        </div>
      )}
      <Composer
        busy={busy}
        paused={paused}
        canCancel={(busy || paused) && lastRun !== null}
        onSend={send}
        onQueue={(text) => queue.add(text).catch((err: Error) => setCancelProblem(err.message))}
        onCancel={cancel}
      />
    </section>
  );
}
