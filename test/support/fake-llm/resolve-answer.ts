import type { FakeAnswerTurn, FakeStop, FakeUsage } from "./fake-turn.js";
import { newToolCallId, newToolUseId } from "./ids.js";
import type { CountedInput } from "./prompt-cache.js";
import { estimateTokens } from "./split-deltas.js";

export interface ResolvedToolCall {
  id: string;
  name: string;
  /** The JSON text the wire carries: `rawArguments`, or `input` serialised. */
  argumentsJson: string;
}

/** A scripted answer with every default filled in, ready for either wire format. */
export interface ResolvedAnswer {
  text: string;
  toolCalls: ResolvedToolCall[];
  stop: FakeStop;
  usage: FakeUsage;
  model: string;
  chunkDelayMs: number;
  /** What goes wrong with the stream, if anything (see FakeAnswerTurn). */
  stallAfterChunks?: number | undefined;
  keepAliveMs?: number | undefined;
  truncateAfterChunks?: number | undefined;
  errorAfterChunks?: number | undefined;
  streamError?: { type?: string; message?: string } | undefined;
}

export function resolveAnswer({
  turn,
  api,
  requestBody,
  counted,
  defaultChunkDelayMs,
}: {
  turn: FakeAnswerTurn;
  api: "anthropic" | "openai";
  requestBody: Record<string, unknown>;
  /** The request's input tokens as billed (see prompt-cache.ts); without it, a rough estimate. */
  counted?: CountedInput | undefined;
  defaultChunkDelayMs: number;
}): ResolvedAnswer {
  const newId = api === "anthropic" ? newToolUseId : newToolCallId;
  const toolCalls = (turn.toolCalls ?? []).map((call) => ({
    id: call.id ?? newId(),
    name: call.name,
    argumentsJson: call.rawArguments ?? JSON.stringify(call.input ?? {}),
  }));
  const text = turn.text ?? "";
  const estimatedInput = estimateTokens({
    system: requestBody.system,
    messages: requestBody.messages,
    tools: requestBody.tools,
  });
  // A scripted usage speaks for the whole call: what it leaves out is estimated, not read off the prompt cache.
  const billed = turn.usage ? undefined : counted;
  const estimatedOutput = estimateTokens(text + toolCalls.map((c) => c.name + c.argumentsJson).join(""));
  return {
    text,
    toolCalls,
    stop: turn.stop ?? (toolCalls.length > 0 ? "tool" : "end"),
    usage: {
      input: turn.usage?.input ?? billed?.input ?? estimatedInput,
      output: turn.usage?.output ?? estimatedOutput,
      cacheRead: turn.usage?.cacheRead ?? billed?.cacheRead ?? 0,
      cacheWrite: turn.usage?.cacheWrite ?? billed?.cacheWrite ?? 0,
    },
    model: turn.model ?? (typeof requestBody.model === "string" ? requestBody.model : "unknown-model"),
    chunkDelayMs: turn.chunkDelayMs ?? defaultChunkDelayMs,
    stallAfterChunks: turn.stallAfterChunks,
    keepAliveMs: turn.keepAliveMs,
    truncateAfterChunks: turn.truncateAfterChunks,
    errorAfterChunks: turn.errorAfterChunks,
    streamError: turn.streamError,
  };
}
