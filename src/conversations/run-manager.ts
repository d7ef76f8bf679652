import { setMaxListeners } from "node:events";
import { toolCallsOf } from "../agent/messages.js";
import { CANCELLED_RESULT, INTERRUPTED_RESULT, repairMessages } from "../agent/repair-history.js";
import type { RunRow } from "../store/schema.js";
import { executeRun, ShutdownSignal } from "./execute-run.js";
import { historyOf } from "./history-of.js";
import { createRunWriter } from "./run-writer.js";
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

  function start(run: RunRow, lastSeq: number): Promise<void> {
    const controller = new AbortController();
    // Each model call and tool call of a long run listens to this one signal.
    setMaxListeners(0, controller.signal);
    const writer = createRunWriter({ services, run, lastSeq });
    const done = executeRun({ services, run, writer, signal: controller.signal }).finally(() => active.delete(run.id));
    active.set(run.id, { controller, done });
    return done;
  }

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
    void start(run, lastSeq);
  }

  async function sweep(): Promise<void> {
    if (stopping) return;
    try {
      for (const run of await store.runs.claimExpired(instanceId, config.runLeaseMs)) {
        if (active.has(run.id)) continue;
        await recover(run).catch((err) => log.error({ run_id: run.id, err }, "could not recover a run"));
      }
    } catch (err) {
      log.warn({ err }, "run sweep failed");
    }
  }

  async function renew(): Promise<void> {
    if (active.size === 0) return;
    try {
      for (const { id, cancelRequested } of await store.runs.renewLeases(instanceId, config.runLeaseMs)) {
        if (cancelRequested) active.get(id)?.controller.abort();
      }
    } catch (err) {
      log.warn({ err }, "lease renewal failed");
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
      every(Math.max(100, Math.floor(config.runLeaseMs / 2)), sweep);
      await sweep();
    },

    /** Aborts a run this process executes; false when it runs elsewhere (or not at all). */
    cancelLocal(runId: string): boolean {
      const entry = active.get(runId);
      entry?.controller.abort();
      return entry !== undefined;
    },

    /** Resolves when the local run ends (at once if it is not local). */
    async settled(runId: string): Promise<void> {
      await active.get(runId)?.done;
    },

    /**
     * Lets running steps finish for up to `timeoutMs`, then stops the rest at
     * their next safe point without ending them, and releases every lease so a
     * process starting later resumes them at once.
     */
    async close({ timeoutMs }: { timeoutMs: number }): Promise<void> {
      stopping = true;
      for (const t of timers) clearInterval(t);
      const all = () => Promise.allSettled([...active.values()].map((a) => a.done));
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
