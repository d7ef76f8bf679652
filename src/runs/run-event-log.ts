import type { NewMessage } from "../core/messages.js";
import { LeaseLost } from "../core/interruptions.js";
import type { NewRunEvent } from "../store/event-repository.js";
import { newId } from "../store/ids.js";
import type { NewRunSpan, RunSave } from "../store/save-run-step.js";
import type { Store } from "../store/store.js";
import { messageSpanData, tellsMessage } from "./trace/message-span.js";
import type { RunEventData, RunEventType } from "./run-events.js";
import type { RunSignals } from "./run-signals.js";

export interface RunEventLogOptions {
  store: Store;
  signals: RunSignals;
  runId: string;
  conversationId: string;
  /** The process that holds the run's lease; every write checks it still does. */
  owner: string;
  /** The last event number already saved for this run. */
  lastSeq: number;
  /** The `seq` the next message of the conversation gets (the run is its only writer). */
  nextMessageSeq: number;
  /**
   * How long events that need not be written at once (text deltas, a tool
   * call starting) may wait to go with the next write. Each keeps its own
   * id; waiting only saves round trips to the database.
   * @default 10
   */
  deltaFlushMs?: number;
}

type EventInput = Pick<NewRunEvent, "type" | "data">;

/** What one write holds besides the events waiting for it. */
export interface CommitParts {
  messages?: NewMessage[];
  progress?: RunSave["progress"];
  end?: RunSave["end"];
  /** The events that announce this write, given the `seq` its first message gets. */
  events?: (firstMessageSeq: number) => EventInput[];
  /** The trace spans of this write, given the `seq` its first message gets (those that tell one of its messages are saved on it). */
  spans?: (firstMessageSeq: number) => NewRunSpan[];
}

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
  lastSeq,
  nextMessageSeq,
  deltaFlushMs = 10,
}: RunEventLogOptions) {
  let seq = lastSeq;
  let messageSeq = nextMessageSeq;
  let pending: EventInput[] = [];
  let timer: NodeJS.Timeout | null = null;
  let chain: Promise<unknown> = Promise.resolve();

  /** Queues a write after every earlier one; the events waiting go first, in the same call. */
  function commit(parts: CommitParts): Promise<void> {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    const result = chain.then(async () => {
      const batch = pending;
      pending = [];
      const spans = parts.spans?.(messageSeq) ?? [];
      const messages = parts.messages ?? [];
      if (batch.length === 0 && messages.length === 0 && spans.length === 0 && !parts.events && !parts.progress && !parts.end) return;
      const numbered: NewRunEvent[] = [...batch, ...(parts.events?.(messageSeq) ?? [])].map((e, i) => ({ seq: seq + 1 + i, ...e }));
      // A message's `message.created` is stored on the message itself (its event id), not as a row of its own.
      const announces = (e: NewRunEvent) => {
        const at = (e.data as { seq?: unknown }).seq;
        return e.type === "message.created" && typeof at === "number" && at >= messageSeq && at < messageSeq + messages.length;
      };
      const eventSeqOf = new Map(numbered.filter(announces).map((e) => [(e.data as { seq: number }).seq, e.seq]));
      const events = numbered.filter((e) => !announces(e));
      // Likewise a message's trace span is stored on the message (its `span`), not as a row of its own.
      const tells = (s: NewRunSpan) => tellsMessage(s, messages[(s.messageSeq ?? 0) - messageSeq]);
      const spanOf = new Map(spans.filter(tells).map((s) => [s.messageSeq!, messageSpanData(s)]));
      try {
        const owned = await store.runs.save({
          runId,
          owner,
          conversationId,
          firstSeq: messageSeq,
          messages: messages.map((m, i) => {
            const eventSeq = eventSeqOf.get(messageSeq + i);
            const span = spanOf.get(messageSeq + i);
            return {
              id: newId("msg"),
              role: m.role,
              content: m.content,
              ...(m.role === "user" && m.kind && { kind: m.kind }),
              ...(eventSeq !== undefined && { event_seq: eventSeq }),
              ...(span && { span }),
            };
          }),
          events,
          progress: parts.progress ?? null,
          end: parts.end ?? null,
          spans: spans.filter((s) => !tells(s)).map(({ type, data }) => ({ type, data })),
        });
        if (!owned) throw new LeaseLost(`run ${runId} is no longer owned by this process`);
      } catch (err) {
        if (!(err instanceof LeaseLost)) pending = [...batch, ...pending];
        throw err;
      }
      seq += numbered.length;
      messageSeq += messages.length;
    });
    chain = result.then(
      () => signals.notify(runId),
      () => {},
    );
    return result;
  }

  const writeLater = () => void commit({}).catch(() => {});

  return {
    /** An event with nothing else to save; those that may wait go with the next write, or within `deltaFlushMs`. */
    emit<T extends RunEventType>(type: T, data: RunEventData<T>): void {
      pending.push({ type, data });
      if (!MAY_WAIT.has(type)) writeLater();
      else timer ??= setTimeout(writeLater, deltaFlushMs);
    },
    commit,
    /** Resolves when everything emitted so far is written. */
    flush: () => commit({}),
  };
}
