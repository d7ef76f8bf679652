import { useEffect, useState } from "react";
import type { Agent, Api } from "./api.ts";
import { AgentDetail } from "./AgentDetail.tsx";

/** The Agents page: the tenant's agents at their latest version; one opened (`#agents/<name>`) shows its versions. */
export function AgentsPage({
  api,
  name,
  onOpenAgent,
  onConversation,
}: {
  api: Api;
  /** The agent opened, or null for the list. */
  name: string | null;
  onOpenAgent: (name: string | null) => void;
  /** A conversation was started from an agent: open it. */
  onConversation: (id: string) => Promise<void>;
}) {
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    if (name !== null) return;
    api.agents().then(
      (list) => (setAgents(list), setProblem(null)),
      (err: Error) => setProblem(err.message),
    );
  }, [api, name]);

  if (name !== null)
    return <AgentDetail api={api} name={name} onBack={() => onOpenAgent(null)} onConversation={onConversation} />;
  return (
    <section className="evals" aria-label="Agents">
      <div className="chat-head">
        <div>
          <h1>Agents</h1>
          <p className="muted small">
            Named, versioned configurations conversations start from (<code>POST /agents</code>,{" "}
            <code>AGENTS_FILE</code>). Open one to compare its versions or start a conversation from it.
          </p>
        </div>
      </div>
      <div className="evals-body">
        {problem && (
          <p className="error" role="alert">
            {problem}
          </p>
        )}
        {agents === null && !problem && <p className="muted">Loading…</p>}
        {agents?.length === 0 && <p className="muted">No agents yet.</p>}
        {agents && agents.length > 0 && (
          <table className="eval-cases">
            <thead>
              <tr>
                <th>Agent</th>
                <th className="num">Version</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {agents.map((a) => (
                <tr key={a.id} aria-label={a.name}>
                  <td>
                    <a
                      href={`#agents/${encodeURIComponent(a.name)}`}
                      onClick={(e) => (e.preventDefault(), onOpenAgent(a.name))}
                    >
                      <strong>{a.name}</strong>
                    </a>{" "}
                    {a.archived_at && <span className="badge bad">archived</span>}{" "}
                    {a.from_file && <span className="badge">AGENTS_FILE</span>}
                    {a.description && <div className="muted small">{a.description}</div>}
                  </td>
                  <td className="num">{a.version}</td>
                  <td>{new Date(a.updated_at).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}
