import { APIConnectionError, APIError, APIUserAbortError } from "openai";
import { ProviderError } from "../../agent/model.js";
import { createAbortError, isAbortError } from "../shared/abort-error.js";

/**
 * Any failure of a Chat Completions call → what `ModelProvider.generate`
 * promises to throw: an AbortError when the caller aborted, else a
 * `ProviderError` carrying the API's own message and HTTP status (null when
 * no response came back: connection failure, missing key, a cut stream).
 */
export function toOpenAIProviderError(error: unknown, signal: AbortSignal | undefined): Error {
  if (signal?.aborted || error instanceof APIUserAbortError || isAbortError(error)) return createAbortError(error);
  if (error instanceof ProviderError) return error;
  // APIConnectionError extends APIError, so it is checked first.
  if (error instanceof APIConnectionError) {
    return new ProviderError(`Could not reach the OpenAI API: ${error.message}`, { status: null, cause: error });
  }
  if (error instanceof APIError) {
    // `error.error` is the body's `error` object; `error.message` prefixes the status.
    const body: unknown = error.error;
    const apiMessage =
      typeof body === "object" && body !== null && "message" in body && typeof body.message === "string" ? body.message : null;
    return new ProviderError(apiMessage ?? error.message, { status: error.status ?? null, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError(`OpenAI request failed: ${message}`, { status: null, cause: error });
}
