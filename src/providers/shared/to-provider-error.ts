import { ProviderError } from "../../core/model-provider.js";
import { withoutCredentials } from "../../util/redact.js";
import { createAbortError, isAbortError } from "./abort-error.js";

type ErrorClass<E extends Error = Error> = abstract new (...args: never[]) => E;

/** The error classes both SDKs (Stainless-generated) export under these names. */
export interface SdkErrorClasses<E extends Error & { status: number | undefined }> {
  APIError: ErrorClass<E>;
  APIConnectionError: ErrorClass;
  APIUserAbortError: ErrorClass;
}

/**
 * Any failure of a model call → what `ModelProvider.generate` promises to
 * throw: an AbortError when the caller aborted, else a `ProviderError`
 * carrying the API's own message and HTTP status (null when no response came
 * back: connection failure, missing credentials, a cut stream).
 */
export function toProviderError<E extends Error & { status: number | undefined }>(
  error: unknown,
  {
    signal,
    url,
    label,
    sdk,
    apiMessageOf,
  }: {
    signal: AbortSignal | undefined;
    /** Where the call went: named when nothing answered there (a local server that is down). */
    url: string | undefined;
    /** "Anthropic", "OpenAI": names the provider in messages that have no API text. */
    label: string;
    sdk: SdkErrorClasses<E>;
    /** The message from the API's error body, without the SDK's status prefix. */
    apiMessageOf: (error: E) => string | null;
  },
): Error {
  if (signal?.aborted || error instanceof sdk.APIUserAbortError || isAbortError(error)) return createAbortError(error);
  if (error instanceof ProviderError) return error;
  // APIConnectionError extends APIError, so it is checked first.
  if (error instanceof sdk.APIConnectionError) {
    return new ProviderError(
      `Could not reach the ${label} API${url ? ` at ${withoutCredentials(url)}` : ""}: ${error.message}`,
      { status: null, cause: error },
    );
  }
  if (error instanceof sdk.APIError) {
    return new ProviderError(apiMessageOf(error) ?? error.message, { status: error.status ?? null, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError(`${label} request failed: ${message}`, { status: null, cause: error });
}
