import type { NewMessage, ToolResultBlock } from "../core/messages.js";
import type { MessageSpan, RunRow } from "../store/schema.js";
import type { Repositories } from "../store/store.js";
import type { MessageEvents, NewRunEvent } from "../store/event-repository.js";
import type { RunEventData, RunEventType } from "./run-events.js";
import { messageSpanData } from "./trace/message-span.js";
import { toolSpan, type ResultOrigin } from "./trace/run-tracer.js";

/** Where a run's numbers stand: its last event, and the `seq` its conversation's next message gets. */
export interface RunPosition {
  lastSeq: number;
  nextMessageSeq: number;
}

/** Whether event `next` is the one right after `last` (ids run 1, 2, 3 … without gaps). */
export const isNextEvent = (last: number, next: number): boolean => next === last + 1;

/** A new run's: no event yet, its first message after the history's last. */
export const newRunPosition = (lastMessageSeq: number): RunPosition => ({
  lastSeq: 0,
  nextMessageSeq: lastMessageSeq + 1,
});

/**
 * A run created in one statement (`runs.start`): its `run.created`, then its
 * user message at `userSeq`, announced. Where its writer takes over.
 */
export const startedRunPosition = (userSeq: number): RunPosition => startedRunWrite(userSeq).next;

/** What `runs.start` wrote, numbered: its `run.created`, and its user message at `userSeq` with its event id. */
export const startedRunWrite = (userSeq: number): NumberedWrite =>
  numberWrite(newRunPosition(userSeq - 1), {
    messageCount: 1,
    eventsOf: (first) => [{ type: "run.created", data: {} }, ...created(1, first)],
  });

type RunKey = Pick<RunRow, "id" | "conversationId">;

/** Where a run's numbers stand in the database: its events and its conversation's messages go on from there. */
export async function positionOf(repos: Pick<Repositories, "events" | "messages">, run: RunKey): Promise<RunPosition> {
  const lastSeq = await repos.events.lastSeq(run.id);
  return { lastSeq, nextMessageSeq: (await repos.messages.lastSeq(run.conversationId)) + 1 };
}

/** An event before it has its number. */
export type EventInput = Pick<NewRunEvent, "type" | "data">;

/** One write's numbers: each message's `seq` and the events it carries, the events that are rows, and where the numbers stand after it. */
export interface NumberedWrite {
  messages: MessageEvents[];
  events: NewRunEvent[];
  /** The tool events the write's messages carry (not rows): what a reader is handed of them. */
  carried: NewRunEvent[];
  next: RunPosition;
}

/**
 * The one numberer of a run's events and its conversation's messages: the
 * messages of a write take the next `seq`s; its events (`eventsOf`, given the
 * first message's `seq`) the next event ids, in order. An event that
 * announces one of the write's messages (`message.created` with its `seq`)
 * becomes that message's event id; a tool result of the write (`resultOf`)
 * carries its call's `tool_call.started` and `tool_call.completed` too, when
 * what they say is what the result and its call say (read back from the
 * message, see src/store/event-repository.ts).
 */
export function numberWrite(
  at: RunPosition,
  {
    messageCount,
    eventsOf,
    resultOf,
  }: {
    messageCount: number;
    eventsOf: (firstMessageSeq: number) => EventInput[];
    resultOf?: ((i: number) => ToolResultBlock | undefined) | undefined;
  },
): NumberedWrite {
  const firstSeq = at.nextMessageSeq;
  const numbered = eventsOf(firstSeq).map((e, i) => ({ seq: at.lastSeq + 1 + i, ...e }));
  const messages: MessageEvents[] = Array.from({ length: messageCount }, (_, i) => ({
    seq: firstSeq + i,
    eventSeq: undefined,
  }));
  const results = resultOf ? messages.map((_, i) => resultOf(i)) : [];
  const events: NewRunEvent[] = [];
  const carried: NewRunEvent[] = [];
  for (const e of numbered) {
    const at = carrierOf(e, { firstSeq, messages, results });
    if (!at) events.push(e);
    else if (at.field === "eventSeq") at.message.eventSeq = e.seq;
    else {
      at.message[at.field] = e.seq;
      if (at.field === "completedEventSeq") at.message.durationMs = (e.data as { duration_ms: number }).duration_ms;
      carried.push(e);
    }
  }
  return {
    messages,
    events,
    carried,
    next: { lastSeq: at.lastSeq + numbered.length, nextMessageSeq: firstSeq + messageCount },
  };
}

type CarryingField = "eventSeq" | "startedEventSeq" | "completedEventSeq";

const sameKeys = (data: object, keys: string[]) => {
  const own = Object.keys(data).filter((k) => (data as Record<string, unknown>)[k] !== undefined);
  return own.length === keys.length && keys.every((k) => own.includes(k));
};
const isInt32 = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 2 ** 31 - 1;

/** The message of the write that carries event `e` (and as which column), or null: the event is a row. */
function carrierOf(
  e: NewRunEvent,
  {
    firstSeq,
    messages,
    results,
  }: { firstSeq: number; messages: MessageEvents[]; results: (ToolResultBlock | undefined)[] },
): { message: MessageEvents; field: CarryingField } | null {
  const data = e.data as Record<string, unknown>;
  const messageAt = (seq: unknown) =>
    typeof seq === "number" && seq >= firstSeq && seq < firstSeq + messages.length ? messages[seq - firstSeq]! : null;
  const free = (message: MessageEvents | null, field: CarryingField) =>
    message && message[field] === undefined ? { message, field } : null;
  if (e.type === "message.created") return free(messageAt(data.seq), "eventSeq");
  if (e.type === "tool_call.completed") {
    const result = results[(data.seq as number) - firstSeq];
    const fits =
      result !== undefined &&
      sameKeys(data, ["tool_call_id", "name", "is_error", "duration_ms", "seq"]) &&
      data.tool_call_id === result.tool_call_id &&
      data.name === result.name &&
      data.is_error === result.is_error &&
      isInt32(data.duration_ms);
    return fits ? free(messageAt(data.seq), "completedEventSeq") : null;
  }
  if (e.type === "tool_call.started") {
    const at = results.findIndex((r) => r?.tool_call_id === data.tool_call_id);
    const fits = at >= 0 && sameKeys(data, ["tool_call_id", "name", "input"]) && data.name === results[at]!.name;
    return fits ? free(messages[at]!, "startedEventSeq") : null;
  }
  return null;
}

/** A tool message's result; undefined for other messages. */
export const resultOf = (message: Pick<NewMessage, "role" | "content">): ToolResultBlock | undefined =>
  message.role === "tool" ? (message.content as [ToolResultBlock])[0] : undefined;

/** Announces messages from `firstSeq` on. */
export const created = (count: number, firstSeq: number): EventInput[] =>
  Array.from({ length: count }, (_, i) => ({ type: "message.created", data: { seq: firstSeq + i } }));

/**
 * Appends to a run in the caller's transaction, outside its writer (a run
 * created, a pause answered or ended), numbered by `numberWrite` from
 * `position` on as the writer's are. `position` afterwards is where the
 * run's writer takes over.
 */
export function createRunAppender(tx: Repositories, run: RunKey, position: RunPosition) {
  let at = position;

  /** Messages (of the run, or of none) and the events that go with them; the `seq` of the first message. */
  async function append(
    items: NewMessage[],
    {
      runId,
      eventsOf,
      spanOf,
    }: {
      runId: string | null;
      eventsOf: (firstSeq: number) => EventInput[];
      spanOf?: ((i: number, seq: number) => MessageSpan) | undefined;
    },
  ): Promise<number> {
    const write = numberWrite(at, { messageCount: items.length, eventsOf, resultOf: (i) => resultOf(items[i]!) });
    const firstSeq = at.nextMessageSeq;
    await tx.messages.append({
      conversationId: run.conversationId,
      runId,
      items,
      firstSeq,
      ...(runId && { eventsOf: (i: number) => write.messages[i]! }),
      ...(spanOf && { spanOf: (i: number) => spanOf(i, firstSeq + i) }),
    });
    await tx.events.append(run.id, write.events);
    at = write.next;
    return firstSeq;
  }

  return {
    get position(): RunPosition {
      return at;
    },

    async event<T extends RunEventType>(type: T, data: RunEventData<T>): Promise<void> {
      await append([], { runId: null, eventsOf: () => [{ type, data }] });
    },

    /** Messages of the run, each announced; the `seq` of the first. */
    messages: (items: NewMessage[]): Promise<number> =>
      append(items, { runId: run.id, eventsOf: (first) => created(items.length, first) }),

    /** Messages of no run, unannounced (the repair of an earlier run's unanswered calls); the `seq` of the first. */
    repairs: (items: NewMessage[]): Promise<number> => append(items, { runId: null, eventsOf: () => [] }),

    /**
     * Tool results of the run, each announced by its `message.created` then
     * its `tool_call.completed`; with `sourceOf`, each with its trace span
     * (where the result came from). The `seq` of the first.
     */
    toolResults(
      results: NewMessage[],
      { sourceOf }: { sourceOf?: ((result: ToolResultBlock) => ResultOrigin) | undefined } = {},
    ): Promise<number> {
      const resultOf = (i: number) => (results[i]!.content as [ToolResultBlock])[0];
      return append(results, {
        runId: run.id,
        eventsOf: (first) =>
          results.flatMap((_, i) => {
            const { tool_call_id, name, is_error } = resultOf(i);
            return [
              ...created(1, first + i),
              { type: "tool_call.completed", data: { tool_call_id, name, is_error, duration_ms: 0, seq: first + i } },
            ];
          }),
        spanOf:
          sourceOf &&
          ((i, seq) => messageSpanData(toolSpan({ result: resultOf(i), seq, source: sourceOf(resultOf(i)) }))),
      });
    },
  };
}

export type RunAppender = ReturnType<typeof createRunAppender>;
