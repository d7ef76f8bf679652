/**
 * An AbortSignal that aborts with any of `signals` (and with its reason), and
 * a `dispose` that detaches it. (Node 20's AbortSignal.any keeps every signal
 * it ever made alive for as long as the long-lived source lives: a leak per
 * request, or per model call of a long run.)
 */
export function linkedAbort(...signals: AbortSignal[]): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const detachers = signals.map((source) => {
    const abort = () => controller.abort(source.reason);
    if (source.aborted) abort();
    else source.addEventListener("abort", abort, { once: true });
    return () => source.removeEventListener("abort", abort);
  });
  return { signal: controller.signal, dispose: () => detachers.forEach((detach) => detach()) };
}
