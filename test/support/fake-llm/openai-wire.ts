import type { FakeStop, FakeUsage } from "./fake-turn.js";
import { newChatCompletionId, newObfuscation, newSystemFingerprint } from "./ids.js";
import type { ResolvedAnswer } from "./resolve-answer.js";
import type { SseEvent } from "./sse-event.js";
import type { WireError } from "./wire-api.js";
import { splitJson, splitWords } from "./split-deltas.js";

/** Chat Completions answers, shaped after recorded responses (see fixtures/openai-*.chunks.txt). */

const FINISH_REASONS: Record<FakeStop, string> = {
  end: "stop",
  tool: "tool_calls",
  max_tokens: "length",
  content_filter: "content_filter",
  refusal: "content_filter",
  pause_turn: "stop",
  context_window_exceeded: "length",
};

export function openAiFinishReason(stop: FakeStop): string {
  return FINISH_REASONS[stop];
}

/** OpenAI counts cached tokens inside prompt_tokens and has no cache-write count. */
function usage(u: FakeUsage) {
  const promptTokens = u.input + u.cacheRead;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: u.output,
    total_tokens: promptTokens + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

export function openAiCompletion(answer: ResolvedAnswer) {
  const message: Record<string, unknown> = {
    role: "assistant",
    content: answer.text === "" && answer.toolCalls.length > 0 ? null : answer.text,
    refusal: null,
    annotations: [],
  };
  if (answer.toolCalls.length > 0) {
    message.tool_calls = answer.toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.argumentsJson },
    }));
  }
  return {
    id: newChatCompletionId(),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: openAiFinishReason(answer.stop) }],
    usage: usage(answer.usage),
    service_tier: "default",
    system_fingerprint: newSystemFingerprint(),
  };
}

export function openAiStreamChunks(answer: ResolvedAnswer, { includeUsage }: { includeUsage: boolean }): SseEvent[] {
  const shell = {
    id: newChatCompletionId(),
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    service_tier: "default",
    system_fingerprint: newSystemFingerprint(),
  };
  // Every chunk carries `usage: null` when usage was asked for, as the real stream does.
  const chunk = (choices: unknown[], usageValue: unknown = null): SseEvent => ({
    data: JSON.stringify({
      ...shell,
      choices,
      ...(includeUsage ? { usage: usageValue } : {}),
      obfuscation: newObfuscation(),
    }),
  });
  const choice = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finishReason,
  });
  const header = (index: number) => {
    const call = answer.toolCalls[index]!;
    return { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } };
  };

  // A tool-only answer opens with the first call's header in the role chunk, as recorded.
  const toolsFirst = answer.text === "" && answer.toolCalls.length > 0;
  const chunks = [
    chunk([
      choice(
        toolsFirst
          ? { role: "assistant", content: null, tool_calls: [header(0)], refusal: null }
          : { role: "assistant", content: "", refusal: null },
      ),
    ]),
  ];
  if (answer.text !== "") {
    for (const content of splitWords(answer.text)) chunks.push(chunk([choice({ content })]));
  }
  answer.toolCalls.forEach((call, index) => {
    if (!(toolsFirst && index === 0)) chunks.push(chunk([choice({ tool_calls: [header(index)] })]));
    for (const args of splitJson(call.argumentsJson)) {
      chunks.push(chunk([choice({ tool_calls: [{ index, function: { arguments: args } }] })]));
    }
  });
  chunks.push(chunk([choice({}, openAiFinishReason(answer.stop))]));
  if (includeUsage) chunks.push(chunk([], usage(answer.usage)));
  chunks.push({ data: "[DONE]" });
  return chunks;
}

export function openAiErrorBody(status: number, { message, param = null, code }: WireError) {
  const byStatus =
    status === 429
      ? { type: "requests", code: "rate_limit_exceeded" }
      : status >= 500
        ? { type: "server_error", code: null }
        : status === 401
          ? { type: "invalid_request_error", code: "invalid_api_key" }
          : { type: "invalid_request_error", code: null };
  return { error: { message, type: byStatus.type, param, code: code === undefined ? byStatus.code : code } };
}
