import { anthropicErrorBody, anthropicMessage, anthropicPing, anthropicStreamEvents } from "./anthropic-wire.js";
import { newAnthropicRequestId, newOpenAiRequestId } from "./ids.js";
import { openAiCompletion, openAiErrorBody, openAiStreamChunks } from "./openai-wire.js";
import { formatSseEvent } from "./sse-event.js";
import { validateAnthropicRequest } from "./validate-anthropic-history.js";
import { validateOpenAiRequest } from "./validate-openai-history.js";
import type { WireApi } from "./wire-api.js";

export const anthropicApi: WireApi = {
  name: "anthropic",
  requestIdHeader: "request-id",
  newRequestId: newAnthropicRequestId,
  validate(body) {
    const message = validateAnthropicRequest(body);
    return message === null ? null : { message };
  },
  errorBody: (status, { message }, requestId) => anthropicErrorBody({ status, message, requestId }),
  json: anthropicMessage,
  stream: (answer) => anthropicStreamEvents(answer),
  // As documented ("Error events"): an `error` event whose data is the API's error body.
  streamError: ({ type = "overloaded_error", message = "Overloaded" }) => ({
    event: "error",
    data: JSON.stringify({ type: "error", error: { type, message } }),
  }),
  keepAlive: formatSseEvent(anthropicPing),
};

export const openAiApi: WireApi = {
  name: "openai",
  requestIdHeader: "x-request-id",
  newRequestId: newOpenAiRequestId,
  validate: validateOpenAiRequest,
  errorBody: (status, error) => openAiErrorBody(status, error),
  json: openAiCompletion,
  stream(answer, body) {
    const options = body.stream_options as { include_usage?: unknown } | undefined;
    return openAiStreamChunks(answer, { includeUsage: options?.include_usage === true });
  },
  // A chunk holding only the error object, as Chat Completions streams send when they fail mid-answer.
  streamError: ({
    type = "server_error",
    message = "The server had an error while processing your request. Sorry about that!",
  }) => ({
    data: JSON.stringify({ error: { message, type, param: null, code: null } }),
  }),
  // OpenAI itself sends none; compatible servers and proxies send SSE comments.
  keepAlive: ": keep-alive\n\n",
};

/** The API a request path belongs to: Anthropic's baseURL is the server, OpenAI's is `${url}/v1`. */
export function wireApiFor(path: string): WireApi | null {
  if (path === "/v1/messages") return anthropicApi;
  if (path === "/v1/chat/completions") return openAiApi;
  return null;
}
