/**
 * Keeps this process's event loop lagging until `stop()`: busy for
 * `busyMs`, then one turn of the loop, again and again — what an overloaded
 * process shows. Requests made meanwhile go on, a step per turn.
 */
export function lagEventLoop({ busyMs = 250 }: { busyMs?: number } = {}): { stop(): Promise<void> } {
  let lagging = true;
  const done = (async () => {
    while (lagging) {
      for (const end = Date.now() + busyMs; Date.now() < end;) {
        // busy: nothing else runs
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  return {
    stop: async () => {
      lagging = false;
      await done;
    },
  };
}

/** Blocks the event loop once, for `ms`: one slow moment (a long synchronous stretch). */
export function blockEventLoop(ms: number): void {
  for (const end = Date.now() + ms; Date.now() < end;) {
    // busy
  }
}

/** Resolves once `condition()` holds, asked every 20 ms; rejects past `timeoutMs`. */
export async function until(
  condition: () => boolean,
  { timeoutMs = 10_000, what = "the condition" }: { timeoutMs?: number; what?: string } = {},
): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !condition();) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
