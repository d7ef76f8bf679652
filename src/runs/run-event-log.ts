import type { NewMessage } from "../core/messages.js";
import { LeaseLost } from "../core/interruptions.js";
import { newId } from "../store/ids.js";
import type { LoggedEvent } from "../store/event-repository.js";
import type { NewRunSpan, RunSave, SavedSpan } from "../store/save-run-step.js";
import { committedEvents } from "./committed-events.js";
import type { Store } from "../store/store.js";
import { messageSpanData, tellsMessage } from "./trace/message-span.js";
import type { RunEventData, RunEventType } from "./run-events.js";
import { numberWrite, resultOf, type EventInput, type RunPosition } from "./run-numbering.js";
import type { RunSignals } from "./run-signals.js";

export interface RunEventLogOptions {
  store: Store;
  signals: RunSignals;
  runId: string;
  conversationId: string;
  /** The process that holds the run's lease; every write checks it still does. */
  owner: string;
  /** Where the run's numbers stand: its last saved event, and the `seq` its conversation's next message gets (the run is its only writer). */
  position: RunPosition;
  /**
   * How long events that need not be written at once (text deltas) may wait
   * to go with the next write. Each keeps its own id; waiting only saves
   * round trips to the database.
   * @default 10
   */
  deltaFlushMs?: number;
  /**
   * How long a tool call's start may wait: a call that ends by then is saved
   * in one write with its start and end, both carried by its result (no row
   * of their own, see src/runs/run-numbering.ts); a longer one's start is
   * written then, on its own.
   * @default 50
   */
  startFlushMs?: number;
  /** What the run's creation just committed (`startedEvents`), handed to its readers as a write of this log. */
  committed?: LoggedEvent[] | undefined;
}

/** What one write holds besides the events waiting for it. */
export interface CommitParts {
  messages?: NewMessage[];
  progress?: RunSave["progress"];
  end?: RunSave["end"];
  /** The events that announce this write, given the `seq` its first message gets. */
  events?: (firstMessageSeq: number) => EventInput[];
  /** The trace spans of this write, given the `seq` its first message gets (those that tell one of its messages are saved on it). */
  spans?: (firstMessageSeq: number) => NewRunSpan[];
  /**
   * Nothing with effects acts on this write before the next: it goes with
   * that one (or on its own after `startFlushMs`), one statement and one
   * transaction less. `commit` then resolves before it is durable.
   */
  soon?: boolean;
}

/** How long a run's last write stays with its signals after its end, for the readers still to take it. */
const FORGET_AFTER_END_MS = 10_000;

/** Events that may wait a few milliseconds for the next write. */
const MAY_WAIT = new Set<string>(["text.delta", "tool_call.started"]);

/**
 * The one writer of a run: its events, and the messages, progress and end
 * they announce. Writes happen one after the other, each a single call to
 * the database (`runs.save`) that also checks this process still owns the
 * run. Events get their numbers (1, 2, 3 …) as they are written, so a reader
 * never sees event n+1 without event n, and a failed write leaves no gap:
 * its events are written again with the next one. Messages are numbered
 * here too, since the run is its conversation's only writer.
 */
export function createRunEventLog({
  store,
  signals,
  runId,
  conversationId,
  owner,
  position,
  deltaFlushMs = 10,
  startFlushMs = 50,
  committed: created,
}: RunEventLogOptions) {
  let at: RunPosition = position;
  let pending: EventInput[] = [];
  /** A write that goes with the next (`soon`), and the events emitted before it, which go first. */
  let waiting: { batch: EventInput[]; parts: CommitParts } | null = null;
  let timer: NodeJS.Timeout | null = null;
  let chain: Promise<unknown> = Promise.resolve();
  /** What this writer last handed to the readers, to forget it (and not a later writer's) when done. */
  let mine: LoggedEvent[] | undefined;
  const release = () => signals.forget(runId, mine);
  if (created) {
    mine = created;
    signals.publish(runId, conversationId, created);
  }

  /** Queues a write after every earlier one; a held write (`soon`) and the events waiting go first, in the same call. */
  function commit(parts: CommitParts): Promise<void> {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    let committed: LoggedEvent[] | null = null;
    let heldBack = false;
    const result = chain.then(async () => {
      const held = waiting;
      const batch = pending;
      pending = [];
      if (parts.soon && !held) {
        waiting = { batch, parts };
        timer ??= setTimeout(writeLater, startFlushMs);
        heldBack = true;
        return;
      }
      waiting = null;
      const firstSeq = at.nextMessageSeq;
      const heldMessages = held?.parts.messages ?? [];
      const heldSpans = held?.parts.spans?.(firstSeq) ?? [];
      const spans = [...heldSpans, ...(parts.spans?.(firstSeq + heldMessages.length) ?? [])];
      const messages = [...heldMessages, ...(parts.messages ?? [])];
      if (
        batch.length === 0 &&
        messages.length === 0 &&
        spans.length === 0 &&
        !held &&
        !parts.events &&
        !parts.progress &&
        !parts.end
      )
        return;
      const write = numberWrite(at, {
        messageCount: messages.length,
        eventsOf: (first) => [
          ...(held ? [...held.batch, ...(held.parts.events?.(first) ?? [])] : []),
          ...batch,
          ...(parts.events?.(first + heldMessages.length) ?? []),
        ],
        resultOf: (i) => resultOf(messages[i]!),
      });
      // A message's trace span is stored on the message (its `span`), as its `message.created` is (its event id), not as a row of its own.
      const tells = (s: NewRunSpan) => tellsMessage(s, messages[(s.messageSeq ?? 0) - firstSeq]);
      const spanOf = new Map(spans.filter(tells).map((s) => [s.messageSeq!, messageSpanData(s)]));
      const save: RunSave = {
        runId,
        owner,
        conversationId,
        firstSeq,
        messages: messages.map((m, i) => {
          const { seq, eventSeq, startedEventSeq, completedEventSeq, durationMs } = write.messages[i]!;
          const span = spanOf.get(seq);
          return {
            id: newId("msg"),
            role: m.role,
            content: m.content,
            ...(m.role === "user" && m.kind && { kind: m.kind }),
            ...(m.role === "user" && m.summarizes && { summarizes: m.summarizes }),
            ...(eventSeq !== undefined && { event_seq: eventSeq }),
            ...(startedEventSeq !== undefined && { started_event_seq: startedEventSeq }),
            ...(completedEventSeq !== undefined && { completed_event_seq: completedEventSeq, duration_ms: durationMs }),
            ...(span && { span }),
          };
        }),
        events: write.events,
        carried: write.carried,
        progress: parts.progress ?? held?.parts.progress ?? null,
        end: parts.end ?? null,
        spans: untoldSpans(spans, tells, firstSeq + messages.length),
      };
      try {
        const savedAt = await store.runs.save(save);
        if (!savedAt) throw new LeaseLost(`run ${runId} is no longer owned by this process`);
        committed = committedEvents(save, savedAt);
      } catch (err) {
        // A held write is never dropped: it goes again with the next, or never (its messages are not written without it).
        if (held) waiting = { batch: held.batch, parts: { ...held.parts, spans: () => heldSpans } };
        if (!(err instanceof LeaseLost)) pending = [...batch, ...pending];
        else release();
        throw err;
      }
      // Readers take the end from here for a while, then from the database; a pause is not handed out at all.
      if (parts.end && committed) forgetLater(signals, runId, committed);
      else if (parts.end) release();
      at = write.next;
    });
    chain = result.then(
      () => {
        if (heldBack) return;
        if (!committed) return signals.notify(runId);
        mine = committed;
        signals.publish(runId, conversationId, committed);
      },
      () => {},
    );
    return result;
  }

  const writeLater = () => void commit({}).catch(() => {});

  return {
    /** An event with nothing else to save; those that may wait go with the next write, or within `deltaFlushMs` (a call's start, `startFlushMs`). */
    emit<T extends RunEventType>(type: T, data: RunEventData<T>): void {
      pending.push({ type, data });
      if (!MAY_WAIT.has(type)) writeLater();
      else timer ??= setTimeout(writeLater, type === "tool_call.started" ? startFlushMs : deltaFlushMs);
    },
    commit,
    /** Resolves when everything emitted so far is written. */
    flush: () => commit({}),
    /** The run stopped here without recording its end (lease lost, shutdown, a failed write): what it handed out is forgotten. */
    release,
  };
}

/**
 * Forgets the run's end after `FORGET_AFTER_END_MS`. Its own function, so
 * that the timer holds the end alone: a closure made inside `commit` would
 * keep the scopes around it, the last write and the run's whole log (its
 * messages, spans, trace), for those 10 s after every run.
 */
function forgetLater(signals: RunSignals, runId: string, end: LoggedEvent[]): void {
  setTimeout(() => signals.forget(runId, end), FORGET_AFTER_END_MS).unref();
}

/**
 * The spans of a write that tell none of its messages, each placed where it
 * stands among those that do: before them all (the database's default), or
 * after one, before the message told next or after the last (the end of a
 * run written with its last answer).
 */
function untoldSpans(spans: NewRunSpan[], tells: (s: NewRunSpan) => boolean, afterLast: number): SavedSpan[] {
  const untold: SavedSpan[] = [];
  let toldBefore = false;
  spans.forEach((s, i) => {
    if (tells(s)) return void (toldBefore = true);
    const at = toldBefore ? (spans.slice(i + 1).find(tells)?.messageSeq ?? afterLast) : undefined;
    untold.push({ type: s.type, data: s.data, ...(at !== undefined && { next_message_seq: at }) });
  });
  return untold;
}
