import { answerPausedRun, type PausedRunAnswer } from "./answer-paused-run.js";
import { RunInterruption } from "../core/interruptions.js";
import { describeError } from "../errors.js";
import type { Services } from "../services.js";
import { executeRun } from "./execute-run.js";
import { keepLeases } from "./keep-leases.js";
import type { LocalRun } from "./local-run.js";
import { recoverRun } from "./recover-run.js";
import type { RunRow } from "../store/schema.js";
import type { RunStart } from "./start-run.js";
import { createRunWriter, type RunWriter } from "./run-writer.js";
import { drainRuns } from "./drain-runs.js";
import { sweepExpiredRuns } from "./sweep-expired-runs.js";
import { expireOverdueActions } from "./expire-overdue-actions.js";
import { startQueuedRun } from "./start-queued-run.js";
import { startStalledQueues } from "./start-stalled-queues.js";
import { wakeWaitingRuns } from "./wake-waiting-runs.js";
import type { Superseded } from "../core/interruptions.js";

export interface RunManagerOptions {
  /**
   * This process is the only one that can reach the database (the embedded
   * one): every active run found at start is orphaned and is taken over at
   * once, without waiting for its lease to lapse.
   * @default false
   */
  exclusive?: boolean;
}

/**
 * The runs this process executes. A run belongs to the server, not to the
 * request that started it: it goes on when the client leaves. The manager
 * keeps each run's lease alive, hears cancels (also those asked of another
 * process), takes over the runs of processes that died, and lets its own
 * finish or stop safely when the process shuts down.
 */
export function createRunManager(services: Services, { exclusive = false }: RunManagerOptions = {}) {
  const { store, config, log, instanceId } = services;
  const active = new Map<string, LocalRun>();
  /** Claimed by a sweep and not yet executing: their leases are kept too. */
  const recovering = new Set<string>();
  const timers: NodeJS.Timeout[] = [];
  let stopping = false;

  function launch(start: RunStart, writer: RunWriter): void {
    const { run } = start;
    if (stopping) {
      // Left for the next process, which may take it over at once; the other
      // runs still finishing here keep their leases.
      void writer
        .flush()
        .then(() => store.runs.releaseLease(run.id, instanceId))
        .catch(() => {});
      return;
    }
    const controller = new AbortController();
    const entry: LocalRun = { controller, done: Promise.resolve() };
    entry.done = executeRun({ services, start, writer, signal: controller.signal }).finally(() => {
      // A run that stopped on a refused write may still have tools running: stop them.
      controller.abort(new RunInterruption(`run ${run.id} is over here`));
      // A run paused and answered at once may already run here again, as a new entry: leave that one.
      if (active.get(run.id) === entry) active.delete(run.id);
      // Stopped here without its end (lease lost, shutdown): its readers go to the database.
      if (!writer.ended) writer.release();
      else {
        // Ended or paused: a run queued behind it starts here (behind a woken run, one may have queued while it waited: none told us).
        leftHere(run.id);
        // Without LISTEN for good, whoever queued behind it could not tell us: look.
        const untold = start.kind === "woken" || services.broadcast.fallbackPollMs !== null;
        if (queueBehind.delete(run.id) || untold) void startQueued(run.conversationId);
      }
    });
    active.set(run.id, entry);
  }

  /** Starts the conversation's next queued run here, if one waits and nothing runs. */
  async function startQueued(conversationId: string): Promise<void> {
    if (stopping) return;
    try {
      const started = await startQueuedRun(services, conversationId);
      if (!started) return;
      if (started.more) queueBehind.add(started.run.id);
      const start: RunStart = { kind: "dequeued", run: started.run, position: started.position };
      launch(start, createRunWriter({ services, run: started.run, position: started.position }));
    } catch (err) {
      // Left queued: the sweeper tries again.
      log.warn({ conversation_id: conversationId, err: describeError(err) }, "could not start a queued run");
    }
  }
  /**
   * Runs of this process with a run queued behind them (told by whoever
   * queued it: `noteQueued`), so that a run's end costs no statement to
   * look for a queue; and the runs that last left here, so that a note
   * arriving just after the run ended still starts the queue. A note lost
   * (a process died) is made good by the sweeper (`startStalledQueues`).
   */
  const queueBehind = new Set<string>();
  const recentlyLeft = new Set<string>();
  const leftHere = (runId: string) => {
    recentlyLeft.delete(runId);
    recentlyLeft.add(runId);
    if (recentlyLeft.size > 1_000) recentlyLeft.delete(recentlyLeft.values().next().value!);
  };

  const recover = async (run: RunRow) => {
    try {
      if (active.has(run.id)) return;
      await recoverRun({ services, run, launch });
    } catch (err) {
      log.error({ run_id: run.id, err: describeError(err) }, "could not recover a run");
    } finally {
      recovering.delete(run.id);
    }
  };
  const sweep = async (orphanedBefore?: Date) => {
    if (stopping) return;
    await sweepExpiredRuns({
      services,
      orphanedBefore,
      hold: (claimed) => claimed.forEach((r) => recovering.add(r.id)),
      recover,
    });
    await expireOverdueActions({ services, startQueued });
    await startStalledQueues({ services, startQueued });
  };

  return {
    /**
     * Executes a run just created, just answered after a pause (then the
     * approved calls run first) or just dequeued, its numbers going on from
     * its `position`; what its creation committed goes to its readers (no
     * read of the database for them).
     */
    start(start: Exclude<RunStart, { kind: "recovered" | "woken" }>): void {
      const committed = start.kind === "created" ? start.committed : undefined;
      launch(start, createRunWriter({ services, run: start.run, position: start.position, committed }));
    },

    /** Saves an answer to a paused run (see `answerPausedRun`); `start` it after. */
    answer: (runId: string, answer: PausedRunAnswer) => answerPausedRun(services, runId, answer),

    /** Begins renewing leases and sweeping for abandoned runs; the first sweep runs now. */
    async open(): Promise<void> {
      const every = (ms: number, fn: () => Promise<void>) => {
        const t = setInterval(() => void fn(), ms);
        t.unref();
        timers.push(t);
      };
      // Renewal is also how a cancel asked of another process reaches us: keep it frequent.
      every(Math.max(50, Math.min(1_000, Math.floor(config.runs.leaseMs / 3))), () =>
        keepLeases({ services, active, recovering }),
      );
      // An abandoned run is taken over within about a lease and a quarter of its
      // owner's death; a paused run past its deadline is ended as soon.
      every(Math.max(100, Math.min(5_000, Math.floor(config.runs.leaseMs / 4))), () => sweep());
      // Runs waiting out an outage are probed within a quarter of MODEL_COOLDOWN_MS (at most a second) of their time.
      every(Math.max(50, Math.min(1_000, Math.floor(config.models.resilience.cooldown.cooldownMs / 4))), () =>
        stopping ? Promise.resolve() : wakeWaitingRuns({ services, launch, startQueued }),
      );
      // The embedded database's engine runs in this process, so this clock is its clock.
      await sweep(exclusive ? new Date() : undefined);
    },

    /** Starts the conversation's next queued run here, if one waits and nothing runs (see `startQueuedRun`). */
    startQueued,

    /**
     * A run was queued behind `runId`: if it runs here, the queue starts
     * when it ends; if it just ended here, now. False when it is not this
     * process's.
     */
    noteQueued(runId: string, conversationId: string): boolean {
      if (active.has(runId)) {
        queueBehind.add(runId);
        return true;
      }
      if (!recentlyLeft.has(runId)) return false;
      void startQueued(conversationId);
      return true;
    },

    /** Whether this process executes the run. */
    isLocal: (runId: string): boolean => active.has(runId),

    /** Aborts a run this process executes (`reason`: why, when a new message supersedes it); false when it runs elsewhere (or not at all). */
    cancelLocal(runId: string, reason?: Superseded): boolean {
      const entry = active.get(runId);
      entry?.controller.abort(reason);
      return entry !== undefined;
    },

    /** Resolves when the local run ends (at once if it is not local), or when `signal` aborts. */
    async settled(runId: string, signal?: AbortSignal): Promise<void> {
      const done = active.get(runId)?.done;
      if (!done || signal?.aborted) return;
      if (!signal) return done;
      let onAbort = () => {};
      const aborted = new Promise<void>((resolve) => (onAbort = resolve));
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        await Promise.race([done, aborted]);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    },

    /** See `drainRuns`. */
    async close({ timeoutMs }: { timeoutMs: number }): Promise<void> {
      stopping = true;
      for (const t of timers) clearInterval(t);
      await drainRuns({ services, active, timeoutMs });
    },

    get activeCount() {
      return active.size;
    },
  };
}

export type RunManager = ReturnType<typeof createRunManager>;
