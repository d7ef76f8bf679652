import type { ProviderErrorKind } from "../../core/model-provider.js";

/** Statuses a second attempt may get past: a timeout, a conflict, a rate limit, the server's own trouble (Anthropic's 529 among them). */
const RETRYABLE_STATUSES = new Set([408, 409, 429]);

/** The request is wrong whatever is tried: a retry cannot help, nor another model. */
const FATAL_TYPES = new Set([
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "invalid_api_key",
]);

/** Anthropic's "prompt is too long: 210000 tokens > 200000 maximum", OpenAI's `context_length_exceeded` / "maximum context length". */
const CONTEXT_WINDOW =
  /context[_ ]length|context window|prompt is too long|maximum context|too many (input )?tokens|request_too_large/i;

/** OpenAI's `insufficient_quota` ("You exceeded your current quota"), and what compatible servers say of a used-up quota. */
const QUOTA_USED_UP = /insufficient_quota|quota/i;

/**
 * What a failed model call allows, from what the provider answered: the one
 * place that decides (see `ProviderErrorKind`). `status` null means no
 * response: the connection, a timeout before the first byte, a stream cut
 * short or an `error` event inside it (Anthropic's `overloaded_error`, an
 * OpenAI error chunk), all worth another attempt unless the type says the
 * request itself is at fault.
 */
export function classifyProviderError({
  status,
  type,
  message,
}: {
  status: number | null;
  type: string | null;
  message: string;
}): ProviderErrorKind {
  const words = `${type ?? ""} ${message}`;
  if (status === null) return type !== null && FATAL_TYPES.has(type) ? "fatal" : "retryable";
  if (status === 413 || ((status === 400 || status === 422) && CONTEXT_WINDOW.test(words))) return "context_window";
  if (status === 429 && QUOTA_USED_UP.test(words)) return "capacity";
  if (RETRYABLE_STATUSES.has(status) || status >= 500) return "retryable";
  return "fatal";
}
