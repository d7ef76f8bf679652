import { ProviderError } from "../../core/model-provider.js";

/**
 * The error for a stream that ended without its own end (Anthropic's
 * `message_stop` or stop reason, Chat Completions' `finish_reason`): the
 * connection was cut. Both SDKs end such a stream quietly, and half a message
 * (text cut mid-sentence, a tool call with half its arguments) must not pass
 * for a whole one.
 */
export function streamCutShort(label: string): ProviderError {
  return new ProviderError(
    `The ${label} stream ended before the answer was complete; the connection was probably cut`,
    { status: null, kind: "retryable" },
  );
}
