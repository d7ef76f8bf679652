import { type ToolResultBlock } from "../core/messages.js";
import { emptyUsage } from "../core/usage.js";
import { presentMessage, presentRun } from "../conversations/present.js";
import { TERMINAL_EVENT_TYPES, type RunState, type StoredRunEvent } from "../runs/run-events.js";
import type { Store } from "../store/store.js";
import type { LoggedEvent } from "../store/event-repository.js";
import type { MessageRow, RunEventRow, RunRow } from "../store/schema.js";

export interface PresentedEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/**
 * A batch of stored run events in the contract's shapes (the SSE `data`):
 * the messages they refer to come with their `message.created` or, for
 * those outside the batch, are read in one query, and the run is shown as
 * it stood at each `run.*` event. Events stored before references were used
 * (they carry their message) pass through.
 */
export async function presentRunEvents(
  store: Pick<Store, "messages">,
  run: RunRow,
  rows: LoggedEvent[],
): Promise<PresentedEvent[]> {
  const messages = new Map(rows.flatMap((row) => (row.message ? [[row.message.seq, row.message] as const] : [])));
  const missing = rows.flatMap((row) => {
    const seq = (row.data as { seq?: unknown; message?: unknown; content?: unknown }).seq;
    const copied = "message" in row.data || "content" in row.data;
    return typeof seq === "number" && !copied && !messages.has(seq) ? [seq] : [];
  });
  for (const m of await store.messages.bySeqs(run.conversationId, [...new Set(missing)])) messages.set(m.seq, m);
  return rows.map((row) => ({ seq: row.seq, type: row.type, data: presentData(row, run, messages) }));
}

function presentData(row: RunEventRow, run: RunRow, messages: Map<number, MessageRow>): Record<string, unknown> {
  const event = { type: row.type, data: row.data } as StoredRunEvent;
  if ("message" in row.data || "content" in row.data) return row.data;
  switch (event.type) {
    case "run.created":
    case "run.started":
      // The run as it began (queued, or started): nothing of how it went or ended.
      return {
        run: presentRun({
          ...run,
          status: event.type === "run.created" && event.data.status === "queued" ? "queued" : "running",
          stopReason: null,
          steps: 0,
          usage: emptyUsage(),
          error: null,
          completedAt: null,
          requiredAction: null,
          budgetExceeded: null,
          result: null,
        }),
      };
    case "message.created": {
      const message = messages.get(event.data.seq);
      return message ? { message: presentMessage(message) } : row.data;
    }
    case "tool_call.completed": {
      const { seq, ...rest } = event.data;
      const result = messages.get(seq)?.content[0] as ToolResultBlock | undefined;
      return { ...rest, content: result?.content ?? "" };
    }
    case "run.waiting":
      return { run: presentRun(atState(run, event.data.run)) };
    default:
      if (TERMINAL_EVENT_TYPES.has(row.type))
        return { run: presentRun(atState(run, (row.data as { run: RunState }).run)) };
      return row.data;
  }
}

const atState = (run: RunRow, { wakeAt, giveUpAt, outageSince, outageProbes, ...state }: RunState): RunRow => ({
  ...run,
  ...state,
  requiredAction: state.requiredAction ?? null,
  budgetExceeded: state.budgetExceeded ?? null,
  result: state.result ?? null,
  modelsUsed: state.modelsUsed ?? null,
  completedAt: state.completedAt === null ? null : new Date(state.completedAt),
  // A wait out an outage as it stood then (the database's times).
  ...(state.status === "waiting" && {
    wakeAt: wakeAt ? new Date(wakeAt) : null,
    giveUpAt: giveUpAt ? new Date(giveUpAt) : null,
    outageSince: outageSince ? new Date(outageSince) : null,
    outageProbes: outageProbes ?? 0,
  }),
});
