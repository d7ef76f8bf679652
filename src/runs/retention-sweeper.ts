import type { Services } from "../services.js";

export interface RetentionSweeper {
  /** One sweep now: every idle conversation, in batches; the count deleted (0 when another instance sweeps). */
  sweep(): Promise<number>;
  close(): Promise<void>;
}

const BATCH = 100;

/**
 * `RETENTION_DAYS`: idle conversations deleted, in batches of 100, by one
 * instance at a time (the database's lock), at start and every
 * `RETENTION_SWEEP_S`. Each sweep is one log line, `retention sweep` with
 * the count deleted.
 */
export function createRetentionSweeper(
  { store, log, histories }: Pick<Services, "store" | "log" | "histories">,
  { days, everyS, onDeleted = () => {} }: { days: number; everyS: number; onDeleted?: (count: number) => void },
): RetentionSweeper {
  let running: Promise<number> | null = null;
  let closed = false;
  const sweepOnce = async (): Promise<number> => {
    const started = Date.now();
    let deleted = 0;
    for (;;) {
      const ids = await store.retention.sweepBatch({ days, batch: BATCH });
      if (ids === null) {
        log.info({ deleted, days, skipped: "another instance is sweeping" }, "retention sweep");
        return deleted;
      }
      for (const id of ids) histories.forget(id);
      deleted += ids.length;
      if (ids.length > 0) onDeleted(ids.length);
      if (ids.length < BATCH || closed) break;
    }
    log.info({ deleted, days, duration_ms: Date.now() - started }, "retention sweep");
    return deleted;
  };
  const sweep = () => (running ??= sweepOnce().finally(() => (running = null)));
  const guarded = () =>
    void sweep().catch((err: unknown) =>
      log.warn({ err }, "retention sweep failed; it runs again at the next interval"),
    );
  const timer = setInterval(guarded, everyS * 1000);
  timer.unref();
  guarded();
  return {
    sweep,
    async close() {
      closed = true;
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}

/** The sweep of `RETENTION_DAYS`, or null without it. */
export function retentionSweeperOf(
  services: Pick<Services, "store" | "log" | "histories" | "config">,
  onDeleted: (count: number) => void,
): RetentionSweeper | null {
  const { retentionDays: days, retentionSweepS: everyS } = services.config.runs;
  return days === null ? null : createRetentionSweeper(services, { days, everyS, onDeleted });
}
