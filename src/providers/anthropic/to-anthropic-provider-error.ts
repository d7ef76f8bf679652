import { APIConnectionError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import { ProviderError } from "../../agent/model.js";
import { createAbortError, isAbortError } from "../shared/abort-error.js";

/**
 * Any failure of an Anthropic call → what `ModelProvider.generate` promises
 * to throw: an AbortError when the caller aborted, else a `ProviderError`
 * carrying the API's own message and HTTP status (null when no response came
 * back: connection failure, missing credentials, a cut stream).
 */
export function toAnthropicProviderError(error: unknown, signal: AbortSignal | undefined): Error {
  if (signal?.aborted || error instanceof APIUserAbortError || isAbortError(error)) return createAbortError(error);
  if (error instanceof ProviderError) return error;
  // APIConnectionError extends APIError, so it is checked first.
  if (error instanceof APIConnectionError) {
    return new ProviderError(`Could not reach the Anthropic API: ${error.message}`, { status: null, cause: error });
  }
  if (error instanceof APIError) {
    return new ProviderError(error.apiMessage ?? error.message, { status: error.status ?? null, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError(`Anthropic request failed: ${message}`, { status: null, cause: error });
}
