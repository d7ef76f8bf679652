import { readFile } from "node:fs/promises";
import path from "node:path";
import type OpenAI from "openai";
import type { FloorStore } from "./floor-store.js";

type Message = OpenAI.ChatCompletionMessageParam;
type ToolCall = OpenAI.ChatCompletionMessageFunctionToolCall;

/** What every request of the floor carries besides the history: loopd's own (model, tools, limits), as recorded by the fake. */
export interface FloorRequest {
  params: Omit<OpenAI.ChatCompletionCreateParamsStreaming, "messages">;
  /** loopd's system messages, sent first. */
  system: Message[];
}

/**
 * The floor: what any durable agent loop must do per step, and nothing else.
 * One model call through the SDK (streamed, as loopd makes it) with the whole
 * history, the tools run, then one append of the step's messages. Returns
 * the number of model calls.
 */
export async function runFloorConversation({
  sdk,
  store,
  request,
  conversationId,
  prompt,
  workspaceDir,
}: {
  sdk: OpenAI;
  store: FloorStore;
  request: FloorRequest;
  conversationId: string;
  prompt: string;
  workspaceDir: string;
}): Promise<number> {
  const user: Message = { role: "user", content: prompt };
  const history: Message[] = [...request.system, user];
  await store.append({ conversationId, firstSeq: 1, messages: [user] });
  let seq = 2;
  for (let calls = 1; ; calls++) {
    const stream = await sdk.chat.completions.create({ ...request.params, messages: history, stream: true });
    const { assistant, toolCalls } = await accumulate(stream);
    const results = await Promise.all(toolCalls.map((call) => readFileTool(call, workspaceDir)));
    const step = [assistant, ...results];
    history.push(...step);
    await store.append({ conversationId, firstSeq: seq, messages: step });
    seq += step.length;
    if (results.length === 0) return calls;
  }
}

/** Folds streamed chunks into the assistant message: text appended (each piece passed to `onText` as it comes), tool calls gathered by index. */
export async function accumulate(
  stream: AsyncIterable<OpenAI.ChatCompletionChunk>,
  onText: (text: string) => Promise<void> = async () => {},
): Promise<{ assistant: OpenAI.ChatCompletionAssistantMessageParam; toolCalls: ToolCall[] }> {
  let text = "";
  const calls: ToolCall[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    text += delta.content ?? "";
    if (delta.content) await onText(delta.content);
    for (const part of delta.tool_calls ?? []) {
      const call = (calls[part.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
      call.id ||= part.id ?? "";
      call.function.name += part.function?.name ?? "";
      call.function.arguments += part.function?.arguments ?? "";
    }
  }
  const assistant: OpenAI.ChatCompletionAssistantMessageParam =
    calls.length > 0
      ? { role: "assistant", content: text || null, tool_calls: calls }
      : { role: "assistant", content: text };
  return { assistant, toolCalls: calls };
}

/** The one tool the scenario calls: a file of the workspace, its lines numbered as loopd's read_file numbers them. */
async function readFileTool(call: ToolCall, workspaceDir: string): Promise<OpenAI.ChatCompletionToolMessageParam> {
  const { path: file } = JSON.parse(call.function.arguments) as { path: string };
  const text = await readFile(path.join(workspaceDir, file), "utf8");
  const lines = text.replace(/\n$/, "").split("\n");
  return { role: "tool", tool_call_id: call.id, content: lines.map((line, i) => `${i + 1}\t${line}`).join("\n") };
}
