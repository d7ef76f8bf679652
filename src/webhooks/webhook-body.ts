import { presentRun } from "../conversations/present.js";
import { runFromJson } from "../store/run-columns.js";
import type { WebhookDeliveryRow } from "../store/schema.js";

/** What a delivery POSTs: `{"type", "timestamp", "data": {"run": Run}}`, the run as it was at that end, as the API shows it. */
export function webhookBody(delivery: Pick<WebhookDeliveryRow, "type" | "createdAt" | "run">): string {
  return JSON.stringify({
    type: delivery.type,
    timestamp: delivery.createdAt.toISOString(),
    data: { run: presentRun(runFromJson(delivery.run)) },
  });
}
