import { useCallback, useEffect, useState } from "react";
import type { Agent, Api } from "./api.ts";
import { VersionDiff } from "./VersionDiff.tsx";

/**
 * One agent: its versions newest first, a diff of two of them (the latest
 * and the one before, until others are picked), archiving it (a second
 * button confirms), and a new conversation from one of its versions.
 */
export function AgentDetail({
  api,
  name,
  onBack,
  onConversation,
}: {
  api: Api;
  name: string;
  onBack: () => void;
  onConversation: (id: string) => Promise<void>;
}) {
  const [versions, setVersions] = useState<Agent[] | null>(null);
  const [pair, setPair] = useState<[number, number] | null>(null);
  const [pinned, setPinned] = useState<number | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const list = await api.agentVersions(name);
      setVersions(list);
      const [latest, before] = list;
      setPair((p) => p ?? (latest ? [before?.version ?? latest.version, latest.version] : null));
      setPinned((v) => v ?? latest?.version ?? null);
    } catch (err) {
      setProblem((err as Error).message);
    }
  }, [api, name]);
  useEffect(() => void load(), [load]);

  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    setProblem(null);
    try {
      await what();
    } catch (err) {
      setProblem((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const archive = () =>
    act(async () => {
      setConfirming(false);
      await api.archiveAgent(name);
      await load();
    });
  const start = () =>
    act(async () => {
      const created = await api.createConversation({ agent: { name, version: pinned }, title: `${name}@${pinned}` });
      await onConversation(created.id);
    });

  const latest = versions?.[0];
  const byVersion = (v: number) => versions?.find((a) => a.version === v);
  return (
    <section className="evals" aria-label={`Agent ${name}`}>
      <div className="chat-head">
        <button type="button" className="link" onClick={onBack}>
          ← Agents
        </button>
        <div>
          <h1>
            {name} {latest?.archived_at && <span className="badge bad">archived</span>}
          </h1>
          <p className="muted small">{latest?.description ?? ""}</p>
        </div>
      </div>
      <div className="evals-body">
        {problem && (
          <p className="error" role="alert">
            {problem}
          </p>
        )}
        {versions === null && !problem && <p className="muted">Loading…</p>}
        {latest && (
          <>
            <div className="agent-actions">
              <label>
                Version
                <select
                  aria-label="Version to start from"
                  value={pinned ?? ""}
                  onChange={(e) => setPinned(Number(e.target.value))}
                >
                  {versions!.map((v) => (
                    <option key={v.version} value={v.version}>
                      {v.version}
                    </option>
                  ))}
                </select>
              </label>
              <button
                type="button"
                className="primary"
                disabled={busy || latest.archived_at !== null}
                onClick={() => void start()}
              >
                New conversation from {name}@{pinned}
              </button>
              {latest.archived_at === null &&
                !latest.from_file &&
                (confirming ? (
                  <span className="confirm-archive" role="group" aria-label="Confirm archiving">
                    New conversations from {name} will be refused.{" "}
                    <button type="button" className="danger" disabled={busy} onClick={() => void archive()}>
                      Archive {name}
                    </button>{" "}
                    <button type="button" onClick={() => setConfirming(false)}>
                      Cancel
                    </button>
                  </span>
                ) : (
                  <button type="button" onClick={() => setConfirming(true)}>
                    Archive…
                  </button>
                ))}
            </div>
            <h2>Versions</h2>
            <table className="eval-cases" aria-label="Versions">
              <thead>
                <tr>
                  <th className="num">Version</th>
                  <th>Description</th>
                  <th>Compare</th>
                </tr>
              </thead>
              <tbody>
                {versions!.map((v) => (
                  <tr key={v.version} aria-label={`Version ${v.version}`}>
                    <td className="num">{v.version}</td>
                    <td className="muted">{v.description ?? "–"}</td>
                    <td>
                      {(["from", "to"] as const).map((side, i) => (
                        <label key={side} className="check">
                          <input
                            type="radio"
                            name={`compare-${side}`}
                            aria-label={`Compare ${side} version ${v.version}`}
                            checked={pair?.[i] === v.version}
                            onChange={() =>
                              setPair((p) =>
                                i === 0 ? [v.version, p?.[1] ?? v.version] : [p?.[0] ?? v.version, v.version],
                              )
                            }
                          />
                          {side}
                        </label>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {pair && byVersion(pair[0]) && byVersion(pair[1]) && (
              <VersionDiff before={byVersion(pair[0])!} after={byVersion(pair[1])!} />
            )}
          </>
        )}
      </div>
    </section>
  );
}
