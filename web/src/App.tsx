import { useCallback, useEffect, useMemo, useState } from "react";
import { ApiError, createApi, storedKey, storeKey, type Conversation } from "./api.ts";
import { ChatView } from "./ChatView.tsx";
import { ConversationList } from "./ConversationList.tsx";
import { AgentsPage } from "./AgentsPage.tsx";
import { EvalReport } from "./EvalReport.tsx";
import { KeyField } from "./KeyField.tsx";
import { TracePanel } from "./TracePanel.tsx";
import icon from "./icon.svg";

/** The open conversation is in the URL's hash, so a reload (or a shared link) opens it again; `#evals` is the Evals page, `#agents[/<name>]` the Agents page. */
const hashId = () => decodeURIComponent(location.hash.slice(1)) || null;
const EVALS = "evals";
const AGENTS = "agents";
/** The agent `#agents/<name>` opens: undefined off the Agents page, null on its list. */
const agentOf = (id: string | null) =>
  id === AGENTS ? null : id?.startsWith(`${AGENTS}/`) ? id.slice(AGENTS.length + 1) : undefined;

export interface TraceTarget {
  conversationId: string;
  runId: string;
  /** Changes when the run moves on, so an open trace is read again. */
  version: string;
}

export function App() {
  const [key, setKey] = useState(storedKey);
  const api = useMemo(() => createApi(key), [key]);
  const [conversations, setConversations] = useState<Conversation[] | null>(null);
  const [listError, setListError] = useState<ApiError | null>(null);
  const [openId, setOpenId] = useState<string | null>(hashId);
  const [trace, setTrace] = useState<TraceTarget | null>(null);

  const refresh = useCallback(async () => {
    try {
      setConversations(await api.conversations());
      setListError(null);
    } catch (err) {
      setListError(err instanceof ApiError ? err : new ApiError(0, "network", String(err)));
    }
  }, [api]);

  useEffect(() => void refresh(), [refresh]);
  useEffect(() => {
    const onHash = () => setOpenId(hashId());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  const open = (id: string | null) => {
    history.pushState(null, "", id ? `#${encodeURIComponent(id)}` : location.pathname);
    setOpenId(id);
    setTrace(null);
  };
  const saveKey = (next: string) => {
    storeKey(next);
    setKey(next);
  };
  const needsKey = listError?.status === 401;
  const agentPage = agentOf(openId);
  const opened = conversations?.find((c) => c.id === openId) ?? null;

  return (
    <div className="app" data-view={openId ? "chat" : "list"} data-trace={trace ? "open" : "closed"}>
      <header className="topbar">
        <a className="brand" href="#" onClick={(e) => (e.preventDefault(), open(null))}>
          <img className="logo" src={icon} alt="" />
          loopd <span className="muted">playground</span>
        </a>
        <nav className="topnav" aria-label="Pages">
          <a
            href={`#${AGENTS}`}
            aria-current={agentPage !== undefined ? "page" : undefined}
            onClick={(e) => (e.preventDefault(), open(AGENTS))}
          >
            Agents
          </a>
          <a
            href={`#${EVALS}`}
            aria-current={openId === EVALS ? "page" : undefined}
            onClick={(e) => (e.preventDefault(), open(EVALS))}
          >
            Evals
          </a>
        </nav>
        <KeyField value={key} onChange={saveKey} required={needsKey} />
      </header>
      <aside className="sidebar">
        <ConversationList
          api={api}
          conversations={conversations}
          error={needsKey ? null : listError}
          openId={openId}
          onOpen={open}
          onChanged={refresh}
        />
      </aside>
      <main className="main">
        {openId === EVALS ? (
          <EvalReport />
        ) : agentPage !== undefined && !needsKey ? (
          <AgentsPage
            api={api}
            name={agentPage}
            onOpenAgent={(name) => open(name === null ? AGENTS : `${AGENTS}/${name}`)}
            onConversation={async (id) => {
              await refresh();
              open(id);
            }}
          />
        ) : needsKey ? (
          <div className="empty">
            <h2>An API key is needed</h2>
            <p>
              This loopd asks for a key on every request. Paste one in the field above; it stays in this browser only.
            </p>
          </div>
        ) : openId ? (
          <ChatView
            key={`${openId}:${key}`}
            api={api}
            apiKey={key}
            conversationId={openId}
            conversation={opened}
            onBack={() => open(null)}
            onChanged={refresh}
            onOpen={open}
            onTrace={(runId, version) => setTrace({ conversationId: openId, runId, version })}
            traceRunId={trace?.runId ?? null}
          />
        ) : (
          <div className="empty">
            <h2>Talk to an agent</h2>
            <p>
              Start a new conversation or open one from the list. Answers stream in as the model writes them; tool
              calls, approvals and each run's trace show up here.
            </p>
          </div>
        )}
      </main>
      {trace && (
        <aside className="trace-panel" aria-label="Run trace">
          <TracePanel api={api} target={trace} onClose={() => setTrace(null)} />
        </aside>
      )}
    </div>
  );
}
