import type { Store } from "../store/store.js";

/** The one log call it makes (Services' `log` fits it; not imported: services.ts names this module). */
interface Log {
  warn(obj: object, msg?: string): void;
}

/** How long a throw-away conversation outlives the last word of the process holding it. */
export const THROWAWAY_KEEP_MS = 10 * 60_000;
const SWEEP_BATCH = 100;

export interface ThrowawayKeeper {
  /** A throw-away conversation this process holds from now on: marked at once, kept on while it exists. */
  hold(conversationId: string): Promise<void>;
  /** Keeps this process's on and deletes the overdue ones (their process is gone) now; also every quarter of the keep. */
  tick(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `store: false` conversations are deleted by whoever holds them once
 * answered (the request, or the WebSocket that keeps them for its life).
 * A process killed before that leaves them behind: each carries a time
 * past which it is deleted, which the process holding it pushes on every
 * quarter of `keepMs`, and every process sweeps the ones left overdue.
 */
export function createThrowawayKeeper(
  { store, log }: { store: Pick<Store, "retention">; log: Log },
  {
    keepMs = THROWAWAY_KEEP_MS,
    discard,
  }: {
    keepMs?: number | undefined;
    /** Deletes a conversation whose time has passed, stopping its run if it has one going. */
    discard: (tenant: string, conversationId: string) => Promise<void>;
  },
): ThrowawayKeeper {
  const held = new Set<string>();
  let running: Promise<void> | null = null;
  const tickOnce = async () => {
    if (held.size > 0) {
      const kept = new Set(await store.retention.keepThrowaways([...held], keepMs));
      // Answered and deleted (or swept): no longer this process's to keep.
      for (const id of held) if (!kept.has(id)) held.delete(id);
    }
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
  const tick = () => (running ??= tickOnce().finally(() => (running = null)));
  const timer = setInterval(
    () =>
      void tick().catch((err: unknown) =>
        log.warn({ err }, "throw-away conversations: keeping or sweeping failed; tried again later"),
      ),
    keepMs / 4,
  );
  timer.unref();
  return {
    async hold(conversationId) {
      held.add(conversationId);
      await store.retention.keepThrowaways([conversationId], keepMs);
    },
    tick,
    async close() {
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
