import { ProviderError } from "../../core/model-provider.js";
import { withoutCredentials } from "../../util/redact.js";
import { createAbortError, isAbortError } from "./abort-error.js";
import { classifyProviderError } from "./classify-provider-error.js";
import { retryAfterMsOf } from "./retry-after.js";

type ErrorClass<E extends Error = Error> = abstract new (...args: never[]) => E;

/** What both SDKs' `APIError` carries that loopd reads. */
type SdkApiError = Error & { status: number | undefined; headers: { get(name: string): string | null } | undefined };

/** The error classes both SDKs (Stainless-generated) export under these names. */
export interface SdkErrorClasses<E extends SdkApiError> {
  APIError: ErrorClass<E>;
  APIConnectionError: ErrorClass;
  APIUserAbortError: ErrorClass;
}

/**
 * Any failure of a model call → what `ModelProvider.generate` promises to
 * throw: an AbortError when the caller aborted, else a `ProviderError`
 * carrying the API's own message, HTTP status (null when no response came
 * back: connection failure, missing credentials, a cut stream, an error
 * inside the stream), error type, the wait it asked for, and what it allows
 * (`classifyProviderError`).
 */
export function toProviderError<E extends SdkApiError>(
  error: unknown,
  {
    signal,
    url,
    label,
    sdk,
    apiMessageOf,
    typeOf,
  }: {
    signal: AbortSignal | undefined;
    /** Where the call went: named when nothing answered there (a local server that is down). */
    url: string | undefined;
    /** "Anthropic", "OpenAI": names the provider in messages that have no API text. */
    label: string;
    sdk: SdkErrorClasses<E>;
    /** The message from the API's error body, without the SDK's status prefix. */
    apiMessageOf: (error: E) => string | null;
    /** The API's own word for the error (its `type` or `code`), inside a stream too. */
    typeOf: (error: E) => string | null;
  },
): Error {
  if (signal?.aborted || error instanceof sdk.APIUserAbortError || isAbortError(error)) return createAbortError(error);
  if (error instanceof ProviderError) return error;
  // APIConnectionError extends APIError, so it is checked first.
  if (error instanceof sdk.APIConnectionError) {
    return new ProviderError(
      `Could not reach the ${label} API${url ? ` at ${withoutCredentials(url)}` : ""}: ${error.message}`,
      { status: null, kind: "retryable", cause: error },
    );
  }
  if (error instanceof sdk.APIError) {
    const message = apiMessageOf(error) ?? error.message;
    const status = error.status ?? null;
    const type = typeOf(error);
    const retryAfterMs = retryAfterMsOf(error.headers);
    const kind = classifyProviderError({ status, type, message });
    return new ProviderError(message, { status, type, retryAfterMs, kind, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  // fetch's TypeError ("terminated", "fetch failed"): the socket went away mid-call, worth another attempt.
  // Anything else (a missing key among them) will fail the same way again.
  const kind = error instanceof TypeError ? "retryable" : "fatal";
  return new ProviderError(`${label} request failed: ${message}`, { status: null, kind, cause: error });
}
