import type { Role } from "../core/messages.js";
import type { BudgetName, OutageWait, RunResult } from "../core/run-outcome.js";
import type { Usage } from "../core/usage.js";
import type { RawQuery } from "./db.js";
import type { NewRunEvent } from "./event-repository.js";
import { pgSafeJson } from "./pg-safe.js";
import {
  grouped,
  ItemFailed,
  itemFailed,
  jsonArgument,
  jsonOf,
  type Grouped,
  type ItemFailure,
} from "./group-commit.js";
import type { MessageSpan, PendingCall, RunError, RunStatus } from "./schema.js";

/** What `save` writes for a run in one round trip. */
export interface RunSave {
  runId: string;
  /** The process that must still hold the run's lease; nothing is written otherwise. */
  owner: string;
  conversationId: string;
  /** The `seq` of the first of `messages`: one past the history's end. */
  firstSeq: number;
  /**
   * `event_seq`: the id of the message's `message.created`, when it has one (it is not a row of `run_events`);
   * `span`: the trace span that tells the message, when it has one (it is not a row of `run_spans`).
   */
  messages: {
    id: string;
    role: Role;
    content: unknown;
    kind?: "notice" | "summary";
    summarizes?: { from_seq: number; to_seq: number };
    event_seq?: number;
    /** A tool result's: the ids of its call's `tool_call.started` and `tool_call.completed`, and the call's duration, when they are carried by it (not rows). */
    started_event_seq?: number;
    completed_event_seq?: number;
    duration_ms?: number;
    span?: MessageSpan;
  }[];
  /** The event rows. */
  events: NewRunEvent[];
  /** The events the messages carry besides their `message.created` (not sent: the messages' columns are them), for the readers handed this save. */
  carried?: NewRunEvent[];
  /** The run's totals so far, when they changed. */
  progress?: { steps: number; usage: Usage } | null;
  /**
   * Its end; `completed_at` (and `completedAt` in any event carrying `run`) is the database's now().
   * Or its pause (`requires_action`): the lease is given up and `requiredAction`
   * recorded, its deadline `timeoutS` from the database's now() (and put in any event carrying `run`).
   */
  end?: RunSaveEnd | null;
  /**
   * The trace of what this save holds that tells no message (see
   * src/runs/trace/run-tracer.ts); numbered by the database after the run's
   * last span, placed before the spans of `messages`, or before that of
   * message `next_message_seq` (past the last: after them all).
   */
  spans?: SavedSpan[];
}

/** A span that tells no message, as a save writes it (a row of `run_spans`). */
export interface SavedSpan {
  type: string;
  data: Record<string, unknown>;
  next_message_seq?: number;
}

/** A trace span as saved; `model.setup` spans are kept once per run (by `data.hash`). */
export interface NewRunSpan {
  type: string;
  data: Record<string, unknown>;
  /** The `seq` of the message the span tells: saved with it, it is that message's `span` (see src/runs/trace/message-span.ts). */
  messageSeq?: number;
}

export type RunSaveEnd =
  | {
      status: Exclude<RunStatus, "requires_action" | "waiting">;
      stopReason: string | null;
      error: RunError | null;
      budgetExceeded?: BudgetName | null | undefined;
      result?: RunResult | null | undefined;
    }
  | { status: "requires_action"; pending: PendingCall[]; timeoutS: number }
  /** Parked out an outage: the lease is given up, the wake and the give-up are set from the database's now(). */
  | { status: "waiting"; error: RunError; outage: OutageWait };

const endParameter = (end: RunSaveEnd) =>
  end.status === "requires_action"
    ? { status: end.status, required_action: { tool_calls: end.pending, timeout_s: end.timeoutS } }
    : end.status === "waiting"
      ? {
          status: end.status,
          error: end.error,
          outage: {
            wake_in_ms: end.outage.wakeInMs,
            give_up_in_ms: end.outage.giveUpInMs,
            since: end.outage.since,
            probes: end.outage.probes,
          },
        }
      : {
          status: end.status,
          stop_reason: end.stopReason,
          error: end.error,
          budget_exceeded: end.budgetExceeded ?? null,
          result: end.result ?? null,
        };

const SAVE = {
  name: "loopd_save",
  // now() is the save's transaction time: every row it wrote has it as its created_at (and an end its completed_at), at their precision.
  text: "select loopd_save($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8::jsonb, $9::jsonb, $10, $11::jsonb) as owned, now()::timestamptz(3) as saved_at",
};

/**
 * Writes a run's new messages, their events, its progress or its end,
 * and the nudge to other processes (`loopd_save`, one statement) —
 * provided `owner` still holds the run. Resolves with the time the rows
 * were written at; null when `owner` does not hold it: nothing was written.
 */
export async function saveRunStep(
  { query, notifies }: { query: RawQuery; notifies: boolean },
  step: RunSave,
): Promise<Date | null> {
  const rows = await query({
    ...SAVE,
    values: [
      step.runId,
      step.owner,
      step.conversationId,
      step.firstSeq,
      pgSafeJson(step.messages),
      pgSafeJson(step.events),
      step.progress?.steps ?? null,
      step.progress ? JSON.stringify(step.progress.usage) : null,
      step.end ? pgSafeJson(endParameter(step.end)) : null,
      notifies,
      pgSafeJson(step.spans ?? []),
    ],
  });
  return rows[0]?.owned === true ? savedAtOf(rows[0]) : null;
}

/** The statement's `saved_at` (its transaction time), as pg (a Date) or PGlite (its text) gives it. */
function savedAtOf(row: Record<string, unknown>): Date {
  const at = row.saved_at;
  return at instanceof Date ? at : new Date(String(at));
}

const SAVE_MANY = {
  name: "loopd_save_many",
  text: "select loopd_save_many($1::jsonb) as results, now()::timestamptz(3) as saved_at",
};

/** One save as an element of `loopd_save_many`'s argument: `loopd_save`'s parameters by name, an absent one null. */
const saveItem = (step: RunSave, notify: boolean) => ({
  run_id: step.runId,
  owner: step.owner,
  conversation_id: step.conversationId,
  first_seq: step.firstSeq,
  messages: step.messages,
  events: step.events,
  ...(step.progress && { steps: step.progress.steps, usage: step.progress.usage }),
  ...(step.end && { end: endParameter(step.end) }),
  notify,
  spans: step.spans ?? [],
});

/**
 * Several runs' saves in one statement and one transaction
 * (`loopd_save_many`, which takes them in the order of their runs' ids, the
 * order lease renewals lock runs in): for each, its time, null when not
 * owned, or the error that undid it alone.
 */
async function saveRunSteps(
  { query, notifies }: { query: RawQuery; notifies: boolean },
  steps: RunSave[],
): Promise<Array<Date | null | Error>> {
  const argument = jsonArgument<RunSave, Date | null>(steps, (step) => pgSafeJson(saveItem(step, notifies)));
  const rows = await query({ ...SAVE_MANY, values: [argument.json] });
  const savedAt = savedAtOf(rows[0]!);
  return argument.answer(
    jsonOf<Array<{ owned: boolean } | ItemFailure>>(rows[0]!.results).map((r) =>
      "code" in r ? itemFailed(r) : r.owned ? savedAt : null,
    ),
  );
}

/**
 * `saveRunStep` for every run of the process, with group commit (`grouped`):
 * at most `slots` saves at the database at once (the rest of the pool stays
 * free for creating runs and reading); the saves that queue meanwhile go
 * together in one `loopd_save_many`.
 */
export function createRunSaver({
  query,
  notifies,
  slots,
}: {
  query: RawQuery;
  notifies: boolean;
  slots: number;
}): Grouped<RunSave, Date | null> {
  const one = (step: RunSave) => saveRunStep({ query, notifies }, step);
  const save = grouped<RunSave, Date | null>({ slots, one, many: (steps) => saveRunSteps({ query, notifies }, steps) });
  // Caught in a lock cycle with a statement that locks several rows in another order (a retention sweep's
  // delete): undone alone, it is written again, alone.
  const saveOrRetry = (step: RunSave) =>
    save(step).catch((err: unknown) =>
      err instanceof ItemFailed && err.code === "40P01" ? one(step) : Promise.reject(err),
    );
  return Object.assign(saveOrRetry, { longestWaitMs: save.longestWaitMs });
}
