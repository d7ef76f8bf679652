import { useState } from "react";
import type { Api, Conversation, ToolInfo } from "./api.ts";

const CLIENT_TOOLS_EXAMPLE = `[{"name": "create_invoice", "description": "Create an invoice.",
  "input_schema": {"type": "object", "properties": {"customer": {"type": "string"}}}}]`;

/** "New conversation", with the settings most worth trying folded under Options: system prompt, provider, approvals, client tools. */
export function NewConversation({ api, onCreated }: { api: Api; onCreated: (c: Conversation) => Promise<void> }) {
  const [tools, setTools] = useState<ToolInfo[] | null>(null);
  const [title, setTitle] = useState("");
  const [system, setSystem] = useState("");
  const [provider, setProvider] = useState("");
  const [approval, setApproval] = useState<string[]>([]);
  const [clientTools, setClientTools] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const create = async () => {
    setProblem(null);
    let client: unknown;
    try {
      client = clientTools.trim() ? JSON.parse(clientTools) : undefined;
    } catch {
      return setProblem("Client tools must be a JSON array of {name, description, input_schema}.");
    }
    setBusy(true);
    try {
      const created = await api.createConversation({
        ...(title.trim() && { title: title.trim() }),
        ...(system.trim() && { system: system.trim() }),
        ...(provider && { provider }),
        ...(approval.length > 0 && { approval_required: approval }),
        ...(client !== undefined && { client_tools: client }),
      });
      setTitle("");
      await onCreated(created);
    } catch (err) {
      setProblem((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="new-conversation">
      <button type="button" className="primary wide" disabled={busy} onClick={() => void create()}>
        + New conversation
      </button>
      <details
        onToggle={(e) =>
          e.currentTarget.open && tools === null ? void api.tools().then(setTools, () => setTools([])) : undefined
        }
      >
        <summary>Options</summary>
        <label>
          Title
          <input value={title} onChange={(e) => setTitle(e.target.value)} placeholder="(from the first message)" />
        </label>
        <label>
          System prompt
          <textarea
            rows={2}
            value={system}
            onChange={(e) => setSystem(e.target.value)}
            placeholder="You are a helpful assistant."
          />
        </label>
        <label>
          Provider
          <select value={provider} onChange={(e) => setProvider(e.target.value)}>
            <option value="">the server's default</option>
            <option value="anthropic">anthropic</option>
            <option value="openai">openai</option>
            <option value="mock">mock</option>
          </select>
        </label>
        <fieldset>
          <legend>Tools that need approval</legend>
          {tools === null && <span className="muted">Loading…</span>}
          {tools?.map((t) => (
            <label key={t.name} className="check" title={t.description}>
              <input
                type="checkbox"
                checked={approval.includes(t.name)}
                onChange={(e) =>
                  setApproval((a) => (e.target.checked ? [...a, t.name] : a.filter((n) => n !== t.name)))
                }
              />
              {t.name}
            </label>
          ))}
        </fieldset>
        <label>
          Client tools (JSON)
          <textarea
            rows={3}
            value={clientTools}
            onChange={(e) => setClientTools(e.target.value)}
            placeholder={CLIENT_TOOLS_EXAMPLE}
            spellCheck={false}
          />
        </label>
      </details>
      {problem && <p className="error">{problem}</p>}
    </div>
  );
}
