/**
 * An AbortSignal that aborts with any of `signals`, and a `dispose` that
 * detaches it. (Node 20's AbortSignal.any keeps every signal it ever made
 * alive for as long as the long-lived source lives: a leak per request.)
 */
export function linkedAbort(...signals: AbortSignal[]): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  for (const s of signals) {
    if (s.aborted) abort();
    else s.addEventListener("abort", abort, { once: true });
  }
  return { signal: controller.signal, dispose: () => signals.forEach((s) => s.removeEventListener("abort", abort)) };
}
