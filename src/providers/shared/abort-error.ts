/**
 * The error every provider throws when the caller's signal aborts a model
 * call. The loop recognises it by `name === "AbortError"` (the same name
 * `fetch` and `AbortSignal.timeout` use) and then checks its own signal to
 * learn why.
 */
export function createAbortError(cause?: unknown): Error {
  const error = new Error("The model call was aborted", cause === undefined ? undefined : { cause });
  error.name = "AbortError";
  return error;
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/** Throws the AbortError when `signal` has aborted; call between awaits. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw createAbortError(signal.reason);
}
