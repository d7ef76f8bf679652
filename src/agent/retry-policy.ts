import type { FallbackReason } from "../core/agent-events.js";
import type { ProviderError } from "../core/model-provider.js";

/** How a model call is retried (config `MODEL_RETRY_BASE_MS`, `MODEL_MAX_ATTEMPTS`, `MODEL_RETRY_MAX_WAIT_MS`). */
export interface RetrySettings {
  /** The first backoff's ceiling; each next one doubles it. @default 500 */
  baseMs: number;
  /** Attempts per model per step. @default 4 */
  maxAttempts: number;
  /** The longest `Retry-After` waited for; a longer one falls over at once. @default 30000 */
  maxWaitMs: number;
}

export const DEFAULT_RETRY: RetrySettings = { baseMs: 500, maxAttempts: 4, maxWaitMs: 30_000 };
/** No backoff waits longer, however many attempts. */
const BACKOFF_CAP_MS = 30_000;

/** What to do after a failed attempt: wait and try the same model again, go to the next model, or give up (the request is at fault). */
export type AfterFailure =
  | { type: "retry"; delayMs: number }
  | { type: "fall_over"; reason: FallbackReason }
  | { type: "out_of_time" }
  | { type: "fail" };

/**
 * The retry rule: a `fatal` error fails the step; a context-window or capacity
 * error, a `Retry-After` over `maxWaitMs` or the last attempt falls over;
 * anything else is retried after the provider's `Retry-After`, else a backoff
 * with full jitter (a random wait up to `baseMs`·2^(attempt−1), at most
 * 30 s) — unless the wait would pass the time left (the run's or the call's).
 */
export function afterFailure(
  error: Pick<ProviderError, "kind" | "retryAfterMs">,
  {
    attempt,
    settings,
    timeLeftMs,
    random = Math.random,
  }: {
    /** The attempt at this model that failed (1 for its first). */
    attempt: number;
    settings: RetrySettings;
    timeLeftMs: number;
    random?: () => number;
  },
): AfterFailure {
  switch (error.kind) {
    case "fatal":
      return { type: "fail" };
    case "context_window":
    case "capacity":
      return { type: "fall_over", reason: error.kind };
    case "retryable":
      break;
  }
  if (error.retryAfterMs !== null && error.retryAfterMs > settings.maxWaitMs)
    return { type: "fall_over", reason: "retry_after_too_long" };
  if (attempt >= settings.maxAttempts) return { type: "fall_over", reason: "attempts_used_up" };
  const delayMs = Math.round(
    error.retryAfterMs ?? random() * Math.min(BACKOFF_CAP_MS, settings.baseMs * 2 ** (attempt - 1)),
  );
  return delayMs >= timeLeftMs ? { type: "out_of_time" } : { type: "retry", delayMs };
}
