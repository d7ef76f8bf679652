import type { FakeAnswerTurn, FakeStop, FakeUsage } from "./fake-turn.js";
import { newToolCallId, newToolUseId } from "./ids.js";
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
}

export function resolveAnswer({
  turn,
  api,
  requestBody,
  defaultChunkDelayMs,
}: {
  turn: FakeAnswerTurn;
  api: "anthropic" | "openai";
  requestBody: Record<string, unknown>;
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
  const estimatedOutput = estimateTokens(text + toolCalls.map((c) => c.name + c.argumentsJson).join(""));
  return {
    text,
    toolCalls,
    stop: turn.stop ?? (toolCalls.length > 0 ? "tool" : "end"),
    usage: {
      input: turn.usage?.input ?? estimatedInput,
      output: turn.usage?.output ?? estimatedOutput,
      cacheRead: turn.usage?.cacheRead ?? 0,
      cacheWrite: turn.usage?.cacheWrite ?? 0,
    },
    model: turn.model ?? (typeof requestBody.model === "string" ? requestBody.model : "unknown-model"),
    chunkDelayMs: turn.chunkDelayMs ?? defaultChunkDelayMs,
    stallAfterChunks: turn.stallAfterChunks,
    keepAliveMs: turn.keepAliveMs,
    truncateAfterChunks: turn.truncateAfterChunks,
  };
}
