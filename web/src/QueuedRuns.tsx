import { useCallback, useEffect, useRef, useState } from "react";
import type { Api, Run } from "./api.ts";

export interface QueuedRun {
  id: string;
  /** What was sent, when this page sent it (a queued run's message is saved only when it starts). */
  text: string | null;
}

/** The conversation's queued runs (messages sent while a run went, `on_busy: "enqueue"`), oldest first. */
export function useQueue(api: Api, conversationId: string) {
  const [queued, setQueued] = useState<QueuedRun[]>([]);
  const texts = useRef(new Map<string, string>());
  const reload = useCallback(async (): Promise<Run[]> => {
    const runs = await api.runs(conversationId);
    // The list is newest first; a queue reads oldest first.
    setQueued(
      runs
        .filter((r) => r.status === "queued")
        .reverse()
        .map((r) => ({ id: r.id, text: texts.current.get(r.id) ?? null })),
    );
    return runs;
  }, [api, conversationId]);
  useEffect(() => void reload().catch(() => {}), [reload]);
  return {
    queued,
    reload,
    async add(text: string) {
      const run = await api.enqueue(conversationId, text);
      texts.current.set(run.id, text);
      await reload();
    },
    async cancel(runId: string) {
      await api.cancel(conversationId, runId);
      await reload();
    },
  };
}

/** The messages waiting their turn, each with a way to take it back. */
export function QueuedRuns({ queued, onCancel }: { queued: QueuedRun[]; onCancel: (runId: string) => void }) {
  if (queued.length === 0) return null;
  return (
    <section className="queued" aria-label="Queued messages">
      <h3 className="small muted">Queued: they run in turn when the agent is done</h3>
      <ol>
        {queued.map((q) => (
          <li key={q.id} data-run-id={q.id}>
            <span className="badge status-queued">queued</span>{" "}
            <span className="queued-text">{q.text ?? <code className="small">{q.id}</code>}</span>
            <button type="button" className="link" onClick={() => onCancel(q.id)}>
              Remove
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}
