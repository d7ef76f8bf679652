import type OpenAI from "openai";
import type { NewMessage, ToolResultBlock } from "../../core/messages.js";

type OpenAIMessage = OpenAI.ChatCompletionMessageParam;

/**
 * Canonical history → Chat Completions `messages`.
 *
 * - `system` becomes the first message, `{ role: "system" }`.
 * - An assistant message becomes one message with its text (or `null`) and
 *   its `tool_calls`; arguments replay exactly what the model sent
 *   (`raw_arguments` when it was not a JSON object, else the JSON of `input`).
 * - Each tool message becomes `{ role: "tool", tool_call_id }`; those after
 *   an assistant message go in the order of its calls.
 * - Ids are passed verbatim: ids made by Anthropic (`toolu_…`) are valid here.
 * - An assistant message with neither text nor tool calls is dropped: the API
 *   rejects one that has neither.
 */
export function convertToOpenAIMessages(system: string | null, messages: readonly NewMessage[]): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  if (system?.trim()) out.push({ role: "system", content: system });
  let callOrder: string[] = [];
  let resultsFrom = -1;
  for (const message of messages) {
    let converted = CONVERTED.get(message);
    if (!converted) CONVERTED.set(message, (converted = convertOne(message)));
    if (message.role !== "tool" && resultsFrom >= 0) resultsFrom = inCallOrder(out, resultsFrom, callOrder);
    if (message.role === "assistant") callOrder = message.content.flatMap((b) => (b.type === "tool_call" ? [b.id] : []));
    if (message.role === "tool" && resultsFrom < 0) resultsFrom = out.length;
    out.push(...converted);
  }
  if (resultsFrom >= 0) inCallOrder(out, resultsFrom, callOrder);
  return out;
}

/**
 * Puts the tool messages from `from` on in the order the model made the
 * calls: results are saved as they come (a paused call's after the others),
 * but the model reads them back in its own order. Returns -1 (no run of
 * results open).
 */
function inCallOrder(out: OpenAIMessage[], from: number, callOrder: string[]): number {
  const rank = (m: OpenAIMessage) => (m.role === "tool" ? callOrder.indexOf(m.tool_call_id) : -1);
  const results = out.slice(from);
  if (results.some((m, i) => i > 0 && rank(m) < rank(results[i - 1]!))) {
    results.sort((a, b) => rank(a) - rank(b));
    out.splice(from, results.length, ...results);
  }
  return -1;
}

/**
 * Each message's conversion, kept as long as the message is: a run holds
 * its history in memory and calls the model again and again with it, so
 * each call converts only what the last step added. (Messages are never
 * changed once made, and the SDK only reads what it is given.)
 */
const CONVERTED = new WeakMap<NewMessage, OpenAIMessage[]>();

function convertOne(message: NewMessage): OpenAIMessage[] {
  switch (message.role) {
    case "user": {
      const parts = message.content.filter((b) => b.text !== "");
      if (parts.length === 0) return [];
      // One block is sent as a plain string, which every compatible server
      // accepts; several keep their boundaries as text parts.
      return [{ role: "user", content: parts.length === 1 ? parts[0]!.text : parts.map((b) => ({ type: "text", text: b.text })) }];
    }
    case "assistant": {
      const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      const toolCalls = message.content.flatMap((b) =>
        b.type === "tool_call"
          ? [{ id: b.id, type: "function" as const, function: { name: b.name, arguments: b.raw_arguments ?? JSON.stringify(b.input) } }]
          : [],
      );
      if (text === "" && toolCalls.length === 0) return [];
      return [{ role: "assistant", content: text === "" ? null : text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }];
    }
    case "tool":
      return message.content.map((result) => ({ role: "tool", tool_call_id: result.tool_call_id, content: toolResultContent(result) }));
  }
}

/**
 * Chat Completions has no `is_error` flag on a tool message, so a failed
 * tool's content is prefixed with `Error: ` (unless it already starts by
 * saying so) to keep the failure visible to the model. The prefix is a
 * replay detail: the canonical history keeps the content and the flag apart.
 */
export function toolResultContent(result: ToolResultBlock): string {
  if (!result.is_error || /^\s*error\b/i.test(result.content)) return result.content;
  return `Error: ${result.content}`;
}
