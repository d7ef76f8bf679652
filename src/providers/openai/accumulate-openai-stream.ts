import { randomUUID } from "node:crypto";
import type OpenAI from "openai";
import type { AssistantBlock } from "../../core/messages.js";
import type { Usage } from "../../core/usage.js";
import { parseToolArguments } from "../shared/parse-tool-arguments.js";
import { streamCutShort } from "../shared/stream-cut-short.js";
import { uniqueToolCalls } from "../shared/unique-tool-calls.js";

export interface AccumulatedOpenAIMessage {
  content: AssistantBlock[];
  finishReason: string | null;
  /** The model sent a `refusal` instead of content. */
  refused: boolean;
  usage: Usage;
  model: string | null;
}

interface PendingToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Folds Chat Completions chunks into one assistant message: `delta.content`
 * is streamed to `onTextDelta` and kept as one text block; `delta.tool_calls`
 * are gathered by `index` (id and name come once, arguments in pieces).
 * Arguments that are not a JSON object are kept as `raw_arguments`. A stream
 * that ends without a `finish_reason` was cut short and throws a
 * `ProviderError`.
 */
export async function accumulateOpenAIStream(
  chunks: AsyncIterable<OpenAI.ChatCompletionChunk>,
  {
    onTextDelta,
    onProgress,
    generateId = () => `call_${randomUUID().replaceAll("-", "").slice(0, 24)}`,
  }: {
    onTextDelta?: ((delta: string) => void) | undefined;
    /** Called for each chunk that carries part of the answer; not for the empty ones some servers send to keep a stream open. */
    onProgress?: (() => void) | undefined;
    /** For servers that send a tool call without an id. */
    generateId?: () => string;
  } = {},
): Promise<AccumulatedOpenAIMessage> {
  let text = "";
  let refused = false;
  const toolCalls = new Map<number, PendingToolCall>();
  let finishReason: string | null = null;
  let usage: Usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
  let model: string | null = null;

  for await (const chunk of chunks) {
    if (carriesAnswer(chunk)) onProgress?.();
    if (chunk.model) model = chunk.model;
    if (chunk.usage) usage = mapOpenAIUsage(chunk.usage);
    // loopd asks for one choice (n = 1).
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const { delta } = choice;
    // A refusal arrives in its own field; it is what the model said, so it
    // is kept and streamed as text.
    if (delta?.refusal) refused = true;
    for (const piece of [delta?.content, delta?.refusal]) {
      if (!piece) continue;
      text += piece;
      onTextDelta?.(piece);
    }
    for (const [position, call] of (delta?.tool_calls ?? []).entries()) {
      const index = call.index ?? position;
      const pending = toolCalls.get(index) ?? { id: "", name: "", arguments: "" };
      toolCalls.set(index, pending);
      if (call.id && !pending.id) pending.id = call.id;
      // Some servers repeat the whole name in every chunk; keep the first.
      if (call.function?.name && !pending.name) pending.name = call.function.name;
      if (call.function?.arguments) pending.arguments += call.function.arguments;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  // Every complete answer names a finish reason, even from compatible servers.
  if (finishReason === null) throw streamCutShort("OpenAI");

  const content: AssistantBlock[] = text === "" ? [] : [{ type: "text", text }];
  for (const [, call] of [...toolCalls.entries()].sort(([a], [b]) => a - b)) {
    content.push({
      type: "tool_call",
      id: call.id || generateId(),
      name: call.name,
      ...parseToolArguments(call.arguments),
    });
  }
  return { content: uniqueToolCalls(content), finishReason, refused, usage, model };
}

/**
 * Whether a chunk holds any part of the answer: the role that opens it, text,
 * a refusal, tool calls, a finish reason, usage, or a field some compatible
 * servers add (`reasoning_content`): a model that is thinking is not stalled.
 */
function carriesAnswer(chunk: OpenAI.ChatCompletionChunk): boolean {
  const choice = chunk.choices?.[0];
  if (chunk.usage || choice?.finish_reason) return true;
  const isEmpty = (value: unknown) =>
    value === null || value === undefined || value === "" || (Array.isArray(value) && value.length === 0);
  return Object.values(choice?.delta ?? {}).some((value: unknown) => !isEmpty(value));
}

/**
 * `prompt_tokens` counts cached tokens too; loopd's `input_tokens` (like
 * Anthropic's) counts only the uncached ones. Chat Completions reports no
 * cache writes, so `cache_write_tokens` is 0.
 */
export function mapOpenAIUsage(usage: OpenAI.CompletionUsage): Usage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage.prompt_tokens ?? 0) - cached),
    output_tokens: usage.completion_tokens ?? 0,
    cache_read_tokens: cached,
    cache_write_tokens: 0,
  };
}
