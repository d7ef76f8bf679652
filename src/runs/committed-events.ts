import type { LoggedEvent } from "../store/event-repository.js";
import { toPgSafe } from "../store/pg-safe.js";
import type { RunSave } from "../store/save-run-step.js";

/**
 * What a save wrote to the run's event log, as `events.after` reads it back:
 * its event rows and the `message.created` of each message it announced,
 * with the message, every row at `savedAt` (the save's transaction time),
 * a terminal event's run completed then too. Null for a pause, whose
 * deadline the database works out.
 */
export function committedEvents(save: RunSave, savedAt: Date): LoggedEvent[] | null {
  if (save.end?.status === "requires_action") return null;
  const completedAt = save.end ? savedAt.toISOString() : null;
  const events = save.events.map((e): LoggedEvent => {
    const data = toPgSafe(e.data) as Record<string, unknown>;
    const run = completedAt !== null && "run" in data ? { run: { ...(data.run as object), completedAt } } : {};
    return { runId: save.runId, seq: e.seq, type: e.type, data: { ...data, ...run }, createdAt: savedAt };
  });
  const announced = save.messages.flatMap((m, i): LoggedEvent[] => {
    if (m.event_seq === undefined) return [];
    const seq = save.firstSeq + i;
    const message = {
      id: m.id,
      conversationId: save.conversationId,
      seq,
      role: m.role,
      content: toPgSafe(m.content),
      eventSeq: m.event_seq,
      excluded: null,
      kind: m.kind ?? null,
      runId: save.runId,
      span: null,
      createdAt: savedAt,
    } as NonNullable<LoggedEvent["message"]>;
    return [{ runId: save.runId, seq: m.event_seq, type: "message.created", data: { seq }, createdAt: savedAt, message }];
  });
  return [...events, ...announced].sort((a, b) => a.seq - b.seq);
}
