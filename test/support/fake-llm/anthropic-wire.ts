import type { FakeStop } from "./fake-turn.js";
import { newAnthropicMessageId } from "./ids.js";
import type { ResolvedAnswer } from "./resolve-answer.js";
import type { SseEvent } from "./sse-event.js";
import { splitJson, splitWords } from "./split-deltas.js";

/** The Messages API's answers, shaped after recorded responses (see fixtures/anthropic-*.chunks.txt). */

const STOP_REASONS: Record<FakeStop, string> = {
  end: "end_turn",
  tool: "tool_use",
  max_tokens: "max_tokens",
  refusal: "refusal",
  // Anthropic has no content filter stop; a refusal is its nearest kin.
  content_filter: "refusal",
  pause_turn: "pause_turn",
  context_window_exceeded: "model_context_window_exceeded",
};

export function anthropicStopReason(stop: FakeStop): string {
  return STOP_REASONS[stop];
}

/** A tool input the SDK can read; an unparseable `rawArguments` is passed on as the bare string. */
function toolInput(argumentsJson: string): unknown {
  try {
    return JSON.parse(argumentsJson);
  } catch {
    return argumentsJson;
  }
}

function usage({ usage }: ResolvedAnswer, outputTokens: number) {
  return {
    input_tokens: usage.input,
    cache_creation_input_tokens: usage.cacheWrite,
    cache_read_input_tokens: usage.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: usage.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    service_tier: "standard",
    inference_geo: "not_available",
  };
}

function messageShell(answer: ResolvedAnswer) {
  return { model: answer.model, id: newAnthropicMessageId(), type: "message", role: "assistant" };
}

export function anthropicMessage(answer: ResolvedAnswer) {
  const content: unknown[] = [];
  if (answer.text !== "") content.push({ type: "text", text: answer.text });
  for (const call of answer.toolCalls) {
    content.push({ type: "tool_use", id: call.id, name: call.name, input: toolInput(call.argumentsJson) });
  }
  return {
    ...messageShell(answer),
    content,
    stop_reason: anthropicStopReason(answer.stop),
    stop_sequence: null,
    usage: usage(answer, answer.usage.output),
  };
}

const event = (data: { type: string } & Record<string, unknown>): SseEvent => ({
  event: data.type,
  data: JSON.stringify(data),
});

/** The keep-alive Anthropic sends in a stream (the SDK drops it). */
export const anthropicPing = event({ type: "ping" });

export function anthropicStreamEvents(answer: ResolvedAnswer): SseEvent[] {
  const start = { ...messageShell(answer), content: [], stop_reason: null, stop_sequence: null };
  const events = [event({ type: "message_start", message: { ...start, usage: usage(answer, 1) } })];
  const blocks: Array<{ start: Record<string, unknown>; deltas: Record<string, unknown>[] }> = [];
  if (answer.text !== "") {
    blocks.push({
      start: { type: "text", text: "" },
      deltas: splitWords(answer.text).map((text) => ({ type: "text_delta", text })),
    });
  }
  for (const call of answer.toolCalls) {
    blocks.push({
      start: { type: "tool_use", id: call.id, name: call.name, input: {} },
      // Recorded tool blocks open with an empty partial_json before the pieces.
      deltas: ["", ...splitJson(call.argumentsJson)].map((partial_json) => ({
        type: "input_json_delta",
        partial_json,
      })),
    });
  }
  blocks.forEach((block, index) => {
    events.push(event({ type: "content_block_start", index, content_block: block.start }));
    if (index === 0) events.push(anthropicPing);
    for (const delta of block.deltas) events.push(event({ type: "content_block_delta", index, delta }));
    events.push(event({ type: "content_block_stop", index }));
  });
  if (blocks.length === 0) events.push(anthropicPing);
  const { usage: u } = answer;
  events.push(
    event({
      type: "message_delta",
      delta: { stop_reason: anthropicStopReason(answer.stop), stop_sequence: null },
      usage: {
        input_tokens: u.input,
        cache_creation_input_tokens: u.cacheWrite,
        cache_read_input_tokens: u.cacheRead,
        output_tokens: u.output,
      },
    }),
    event({ type: "message_stop" }),
  );
  return events;
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

export function anthropicErrorBody({
  status,
  message,
  requestId,
}: {
  status: number;
  message: string;
  requestId: string;
}) {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
  return { type: "error", error: { type, message }, request_id: requestId };
}
