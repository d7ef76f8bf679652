import { describeError } from "../errors.js";
import type { Services } from "../services.js";

/** How long a queued run may wait with nothing running ahead of it before a sweeper starts it (its own starter is given that long). */
export const STALLED_QUEUE_MS = 1_000;

/**
 * Starts the queues nobody started: the run ahead of them ended in a process
 * that died before starting the next one. Any process may do it; the start
 * itself is under the conversation's lock, so two sweepers start one run.
 */
export async function startStalledQueues({
  services: { store, log },
  startQueued,
  batchSize = 20,
}: {
  services: Services;
  startQueued: (conversationId: string) => Promise<void>;
  batchSize?: number;
}): Promise<void> {
  try {
    for (const conversationId of await store.queue.stalled(STALLED_QUEUE_MS, batchSize))
      await startQueued(conversationId);
  } catch (err) {
    log.warn({ err: describeError(err) }, "starting stalled queues failed");
  }
}
