import { useEffect, useState } from "react";
import type { Api, WebhookDelivery } from "./api.ts";

/** A run's webhooks and each attempt to deliver them; nothing when the run has none. */
export function WebhookAttempts({
  api,
  conversationId,
  runId,
  version,
}: {
  api: Api;
  conversationId: string;
  runId: string;
  version: string;
}) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[]>([]);
  useEffect(() => {
    let live = true;
    api.webhooks(conversationId, runId).then(
      (d) => live && setDeliveries(d),
      () => live && setDeliveries([]),
    );
    return () => void (live = false);
  }, [api, conversationId, runId, version]);
  if (deliveries.length === 0) return null;
  return (
    <section className="webhooks" aria-label="Webhooks">
      <h3>Webhooks</h3>
      <ul>
        {deliveries.map((d) => (
          <li key={d.id}>
            <span className={`badge webhook-${d.status}`}>{d.status}</span> <code className="small">{d.type}</code>{" "}
            <span className="muted small">{d.url}</span>
            <ol className="attempts">
              {d.attempts.map((a, i) => (
                <li key={i} className="small">
                  {new Date(a.at).toLocaleTimeString()} —{" "}
                  {a.status_code !== null ? `HTTP ${a.status_code}` : "no answer"}
                  {a.error && <span className="muted"> · {a.error}</span>}
                </li>
              ))}
            </ol>
          </li>
        ))}
      </ul>
    </section>
  );
}
