import { linkedAbort } from "../util/linked-abort.js";
import { ProviderError } from "../core/model-provider.js";

export const DEFAULT_MODEL_CALL_TIMEOUT_MS = 600_000;
export const DEFAULT_MODEL_STREAM_IDLE_MS = 60_000;

export interface ModelCallDeadline {
  /** The call's own signal: aborts when the run's does, or when a deadline passes. */
  readonly signal: AbortSignal;
  /** Restarts the idle clock: the provider calls it on each chunk that carries part of the answer. */
  onProgress(): void;
  /** The provider error to report when a deadline ended the call; null when none did. */
  expired(): ProviderError | null;
  /** Stops the clocks and unlinks the call from the run's signal; call it once the call is over. */
  dispose(): void;
}

/**
 * The deadlines of one model call and the signal that enforces them. The SDKs'
 * own timeouts end at the response headers, after which a stalled stream
 * (nothing, or only keep-alives) would hold the conversation forever.
 *
 * Each call gets a signal of its own, linked to the run's and unlinked after:
 * the OpenAI SDK adds an `abort` listener to the signal it is given and never
 * removes it, so one signal shared by every call of a run would gather one
 * listener per call.
 */
export function startModelCallDeadline({
  signal,
  callTimeoutMs = DEFAULT_MODEL_CALL_TIMEOUT_MS,
  callLimitMs = callTimeoutMs,
  idleMs = DEFAULT_MODEL_STREAM_IDLE_MS,
}: {
  /** The run's signal. */
  signal?: AbortSignal | undefined;
  /** The most the whole call may take, the SDK's retries included. @default 600000 */
  callTimeoutMs?: number | undefined;
  /**
   * The call's whole limit as its error names it, when `callTimeoutMs` is what is left of it
   * after earlier attempts. @default callTimeoutMs
   */
  callLimitMs?: number | undefined;
  /** The most the call may go without progress, counted from its start too. @default 60000 */
  idleMs?: number | undefined;
}): ModelCallDeadline {
  const deadline = new AbortController();
  const link = linkedAbort(deadline.signal, ...(signal ? [signal] : []));
  let expired: ProviderError | null = null;
  let over = false;
  let progressed = false;
  const expire = (message: string) => () => {
    // A timeout before the first part of the answer is worth another attempt (when the call's time allows one);
    // a stream that stalls halfway is not retried: what it streamed stays as it was, and the run fails as before.
    expired = new ProviderError(message, { status: null, kind: progressed ? "fatal" : "retryable" });
    over = true;
    deadline.abort(expired);
  };
  const whole = setTimeout(
    expire(`the model call took longer than ${seconds(callLimitMs)}; it was abandoned`),
    callTimeoutMs,
  );
  // Counted from the start as well: headers followed by nothing is a stall too.
  const idle = setTimeout(
    expire(`the model stream sent nothing for ${seconds(idleMs)}; the call was abandoned`),
    idleMs,
  );
  return {
    signal: link.signal,
    onProgress() {
      progressed = true;
      // refresh() would bring a fired or cleared timer back to life.
      if (!over) idle.refresh();
    },
    expired: () => expired,
    dispose() {
      over = true;
      clearTimeout(whole);
      clearTimeout(idle);
      link.dispose();
    },
  };
}

const seconds = (ms: number) => `${ms / 1000} s`;
