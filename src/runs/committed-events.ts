import { endsRefused } from "../core/run-outcome.js";
import type { LoggedEvent } from "../store/event-repository.js";
import { toPgSafe } from "../store/pg-safe.js";
import type { RunSave } from "../store/save-run-step.js";
import type { RunRow } from "../store/schema.js";
import { startedRunWrite } from "./run-numbering.js";

/**
 * What a save wrote to the run's event log, as `events.after` reads it back:
 * its event rows and the `message.created` of each message it announced,
 * with the message, every row at `savedAt` (the save's transaction time),
 * a terminal event's run completed then too. Null for a pause, whose
 * deadline the database works out, and for a wait out an outage (its wake, likewise).
 */
export function committedEvents(save: RunSave, savedAt: Date): LoggedEvent[] | null {
  if (save.end?.status === "requires_action" || save.end?.status === "waiting") return null;
  const completedAt = save.end ? savedAt.toISOString() : null;
  const events = [...save.events, ...(save.carried ?? [])].map((e): LoggedEvent => {
    const data = asStored(e.data) as Record<string, unknown>;
    const run = completedAt !== null && "run" in data ? { run: { ...(data.run as object), completedAt } } : {};
    return { runId: save.runId, seq: e.seq, type: e.type, data: { ...data, ...run }, createdAt: savedAt };
  });
  // The end of a refused turn marks the run's messages, those of this save too.
  const refused = !!save.end && endsRefused(save.end.stopReason);
  const announced = save.messages.flatMap((m, i): LoggedEvent[] => {
    if (m.event_seq === undefined) return [];
    const seq = save.firstSeq + i;
    const message = {
      id: m.id,
      conversationId: save.conversationId,
      seq,
      role: m.role,
      content: asStored(m.content),
      eventSeq: m.event_seq,
      excluded: refused ? "refusal" : null,
      kind: m.kind ?? null,
      runId: save.runId,
      span: null,
      createdAt: savedAt,
    } as NonNullable<LoggedEvent["message"]>;
    return [
      { runId: save.runId, seq: m.event_seq, type: "message.created", data: { seq }, createdAt: savedAt, message },
    ];
  });
  return [...events, ...announced].sort((a, b) => a.seq - b.seq);
}

/**
 * What a run's creation in one statement (`runs.start`) wrote to its event
 * log: its `run.created` (event 1) and its user message's `message.created`
 * (event 2), at the run's creation time (the statement's transaction time).
 */
export function startedEvents(
  run: Pick<RunRow, "id" | "conversationId" | "firstSeq" | "createdAt">,
  message: { id: string; content: unknown },
): LoggedEvent[] {
  const write = startedRunWrite(run.firstSeq!);
  const save = {
    runId: run.id,
    owner: "",
    conversationId: run.conversationId,
    firstSeq: run.firstSeq!,
    messages: [
      { id: message.id, role: "user" as const, content: message.content, event_seq: write.messages[0]!.eventSeq! },
    ],
    events: write.events,
  };
  return committedEvents(save, run.createdAt)!;
}

/**
 * A value as a jsonb column gives it back: mended as it is saved, and each
 * object's keys in jsonb's order (shorter first, then by their UTF-8 bytes),
 * so that what a reader is handed is, byte for byte, what a replay reads.
 */
function asStored(value: unknown): unknown {
  return jsonbOrder(toPgSafe(value));
}

const ASCII = /^[^\u0080-\uffff]*$/;
// Keys of ASCII alone (nearly all): their UTF-8 bytes are their characters, compared as they are.
const byJsonbKeyOrder = (a: string, b: string) =>
  ASCII.test(a) && ASCII.test(b)
    ? a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)
    : Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b));

function jsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrder);
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  const record = value as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort(byJsonbKeyOrder))
    if (record[key] !== undefined) ordered[key] = jsonbOrder(record[key]);
  return ordered;
}
