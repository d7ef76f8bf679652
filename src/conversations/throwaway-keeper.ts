import type { Store } from "../store/store.js";

/** The one log call it makes (Services' `log` fits it; not imported: services.ts names this module). */
interface Log {
  warn(obj: object, msg?: string): void;
}

/** How long a throw-away conversation outlives the last word of the process holding it. */
export const THROWAWAY_KEEP_MS = 10 * 60_000;
const SWEEP_BATCH = 100;

export interface ThrowawayKeeper {
  /** How long a throw-away conversation outlives the last word of its holder: the mark it is made with (`discardInMs`). */
  readonly keepMs: number;
  /** A throw-away conversation this process holds from now on (made marked, in the statement that made it): kept on while it exists. */
  hold(conversationId: string): void;
  /** It was deleted (answered, dropped, refused): no longer this process's to keep. */
  release(conversationId: string): void;
  /** Keeps this process's on, now; also every quarter of the keep. */
  renew(): Promise<void>;
  /** Deletes the overdue ones (their process is gone), now; also every quarter of the keep. */
  sweep(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `store: false` conversations are deleted by whoever holds them once
 * answered (the request, or the WebSocket that keeps them for its life).
 * A process killed before that leaves them behind: each carries a time
 * past which it is deleted, which the process holding it pushes on every
 * quarter of `keepMs`, and every process sweeps the ones left overdue.
 * Renewals have a timer of their own: a slow sweep never holds them up.
 */
export function createThrowawayKeeper(
  { store, log }: { store: Pick<Store, "retention">; log: Log },
  {
    keepMs = THROWAWAY_KEEP_MS,
    discard,
  }: {
    keepMs?: number | undefined;
    /** Deletes a conversation if its time has passed (checked under its lock), stopping its run; false if not. */
    discard: (tenant: string, conversationId: string) => Promise<boolean>;
  },
): ThrowawayKeeper {
  const held = new Set<string>();
  const renewOnce = async () => {
    if (held.size === 0) return;
    const asked = [...held];
    const kept = new Set(await store.retention.keepThrowaways(asked, keepMs));
    // Deleted without a word (by another process, say): no longer this process's to keep. Only
    // those asked about: one held since (made marked while this renewal ran) is kept on.
    for (const id of asked) if (!kept.has(id)) held.delete(id);
  };
  const sweepOnce = async () => {
    for (const { id, tenantId } of await store.retention.overdueThrowaways(SWEEP_BATCH)) {
      if (held.has(id)) continue;
      await discard(tenantId, id).catch((err: unknown) =>
        log.warn(
          { err, conversation_id: id },
          "could not delete an overdue throw-away conversation; tried again later",
        ),
      );
    }
  };
  const renew = single(renewOnce);
  const sweep = single(sweepOnce);
  const every = (work: () => Promise<void>, what: string) => {
    const timer = setInterval(
      () =>
        void work().catch((err: unknown) =>
          log.warn({ err }, `throw-away conversations: ${what} failed; tried again later`),
        ),
      keepMs / 4,
    );
    timer.unref();
    return timer;
  };
  const timers = [every(renew, "keeping them"), every(sweep, "the sweep")];
  return {
    keepMs,
    hold: (conversationId) => void held.add(conversationId),
    release: (conversationId) => void held.delete(conversationId),
    renew,
    sweep,
    async close() {
      for (const timer of timers) clearInterval(timer);
      await Promise.all([renew.settled(), sweep.settled()]);
    },
  };
}

/** `work`, never twice at once: a call while it runs shares that run; `settled` awaits the one running, if any. */
function single(work: () => Promise<void>) {
  let running: Promise<void> | null = null;
  const run = () => (running ??= work().finally(() => (running = null)));
  return Object.assign(run, { settled: async () => void (await running?.catch(() => {})) });
}
