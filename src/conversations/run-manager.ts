import { toolCallsOf } from "../agent/messages.js";
import { CANCELLED_RESULT, INTERRUPTED_RESULT, repairMessages } from "../agent/repair-history.js";
import type { RunRow } from "../store/schema.js";
import { RunInterruption } from "../agent/run-interruption.js";
import { describeError } from "../errors.js";
import { executeRun, ShutdownSignal } from "./execute-run.js";
import { LeaseLost } from "./run-event-log.js";
import { historyOf } from "./history-of.js";
import { createRunWriter, type RunWriter } from "./run-writer.js";
import type { Services } from "./services.js";

/**
 * The runs this process executes. A run belongs to the server, not to the
 * request that started it: it goes on when the client leaves. The manager
 * keeps each run's lease alive, hears cancels (also those asked of another
 * process), and takes over the runs of processes that died.
 */
export function createRunManager(services: Services) {
  const { store, config, log, instanceId } = services;
  const active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  const timers: NodeJS.Timeout[] = [];
  let stopping = false;

  function launch(run: RunRow, writer: RunWriter): Promise<void> {
    if (stopping) {
      // Left for the next process, which may take it over at once.
      return writer
        .flush()
        .then(() => store.runs.releaseLeases(instanceId))
        .catch(() => {});
    }
    const controller = new AbortController();
    const done = executeRun({ services, run, writer, signal: controller.signal }).finally(() => {
      // A run that stopped on a refused write may still have tools running: stop them.
      controller.abort(new RunInterruption(`run ${run.id} is over here`));
      active.delete(run.id);
    });
    active.set(run.id, { controller, done });
    return done;
  }

  /** Executes a run just created, whose last event is `lastSeq`. */
  const start = (run: RunRow, lastSeq: number) => launch(run, createRunWriter({ services, run, lastSeq }));

  /**
   * Ends or resumes a run whose process died. A call cut off mid-tool gets the
   * "interrupted" result and the run fails; a run whose last saved step was
   * complete carries on where it stopped.
   */
  async function recover(run: RunRow): Promise<void> {
    const lastSeq = await store.events.lastSeq(run.id);
    const history = historyOf(await store.messages.history(run.conversationId));
    const writer = createRunWriter({ services, run, lastSeq });
    if (run.cancelRequested) {
      await writer.save(repairMessages(history, CANCELLED_RESULT));
      return writer.finish({ status: "cancelled", stopReason: "cancelled", error: null });
    }
    const repairs = repairMessages(history, INTERRUPTED_RESULT);
    if (repairs.length > 0) {
      await writer.save(repairs);
      return writer.finish({
        status: "failed",
        stopReason: "error",
        error: { code: "interrupted", message: "the server stopped while a tool was running; the call was answered as interrupted and the conversation can go on" },
      });
    }
    const last = history.at(-1);
    if (last?.role === "assistant" && toolCallsOf(last).length === 0) {
      return writer.finish({ status: "completed", stopReason: "end_turn", error: null });
    }
    log.info({ run_id: run.id, steps: run.steps }, "resuming a run after its process stopped");
    // Text streamed by the call that was cut off is in the log already; this
    // tells readers to drop it, as the model is called again from the last saved step.
    writer.emit("step.restarted", { step: run.steps + 1, reason: "the process running this step stopped; the model is called again" });
    void launch(run, writer);
  }

  async function sweep(): Promise<void> {
    if (stopping) return;
    try {
      for (const run of await store.runs.claimExpired(instanceId, config.runLeaseMs)) {
        if (active.has(run.id)) continue;
        await recover(run).catch((err) => log.error({ run_id: run.id, err: describeError(err) }, "could not recover a run"));
      }
    } catch (err) {
      log.warn({ err: describeError(err) }, "run sweep failed");
    }
  }

  /**
   * Extends the leases of the runs executing here. A run whose lease was not
   * extended was taken over (this process stalled past its lease) or ended
   * elsewhere: it stops at once and writes nothing more.
   */
  async function renew(): Promise<void> {
    const runIds = [...active.keys()];
    if (runIds.length === 0) return;
    try {
      const renewed = await store.runs.renewLeases({ owner: instanceId, runIds, leaseMs: config.runLeaseMs });
      for (const { id, cancelRequested } of renewed) {
        if (cancelRequested) active.get(id)?.controller.abort();
      }
      const kept = new Set(renewed.map((r) => r.id));
      for (const id of runIds.filter((id) => !kept.has(id))) {
        active.get(id)?.controller.abort(new LeaseLost(`run ${id} was taken over by another process`));
      }
    } catch (err) {
      log.warn({ err: describeError(err) }, "lease renewal failed");
    }
  }

  return {
    start,
    /** Begins renewing leases and sweeping for abandoned runs; the first sweep runs now. */
    async open(): Promise<void> {
      const every = (ms: number, fn: () => Promise<void>) => {
        const t = setInterval(() => void fn(), ms);
        t.unref();
        timers.push(t);
      };
      // Renewal is also how a cancel asked of another process reaches us: keep it frequent.
      every(Math.max(50, Math.min(1_000, Math.floor(config.runLeaseMs / 3))), renew);
      // An abandoned run is taken over within about a lease and a quarter of its owner's death.
      every(Math.max(100, Math.min(5_000, Math.floor(config.runLeaseMs / 4))), sweep);
      await sweep();
    },

    /** Aborts a run this process executes; false when it runs elsewhere (or not at all). */
    cancelLocal(runId: string): boolean {
      const entry = active.get(runId);
      entry?.controller.abort();
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

    /**
     * Lets running steps finish for up to `timeoutMs`, then stops the rest at
     * their next safe point without ending them, and releases every lease so a
     * process starting later resumes them at once.
     */
    async close({ timeoutMs }: { timeoutMs: number }): Promise<void> {
      stopping = true;
      for (const t of timers) clearInterval(t);
      // Until none is left: a run may start (from a request under way) while we wait.
      const all = async () => {
        while (active.size > 0) await Promise.allSettled([...active.values()].map((a) => a.done));
      };
      const timedOut = await Promise.race([all().then(() => false), sleep(timeoutMs).then(() => true)]);
      if (timedOut) {
        for (const { controller } of active.values()) controller.abort(new ShutdownSignal("server shutting down"));
        await all();
      }
      await store.runs.releaseLeases(instanceId).catch(() => {});
    },

    get activeCount() {
      return active.size;
    },
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

export type RunManager = ReturnType<typeof createRunManager>;
