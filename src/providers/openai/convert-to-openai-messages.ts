import type OpenAI from "openai";
import {
  isAttached,
  type AttachmentData,
  type NewMessage,
  type ToolResultBlock,
  type UserBlock,
} from "../../core/messages.js";
import { attachmentBase64, notLoaded, textOfBase64, toolImagesInWords } from "../shared/attachment-data.js";

type OpenAIMessage = OpenAI.ChatCompletionMessageParam;
type UserPart = OpenAI.ChatCompletionContentPart;

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
 * - Images become `image_url` parts (a data URL of the attachment's bytes,
 *   or the URL as it came), a PDF a `file` part, a text document a text
 *   part with its title and text.
 * - An assistant message with neither text nor tool calls is dropped: the API
 *   rejects one that has neither.
 */
export function convertToOpenAIMessages(
  system: string | null,
  messages: readonly NewMessage[],
  attachments?: AttachmentData,
): OpenAIMessage[] {
  const out: OpenAIMessage[] = [];
  if (system?.trim()) out.push({ role: "system", content: system });
  let callOrder: string[] = [];
  let resultsFrom = -1;
  for (const message of messages) {
    let converted = CONVERTED.get(message);
    if (!converted) {
      const missing = { any: false };
      converted = convertOne(message, attachments, missing);
      if (!missing.any) CONVERTED.set(message, converted);
    }
    if (message.role !== "tool" && resultsFrom >= 0) resultsFrom = inCallOrder(out, resultsFrom, callOrder);
    if (message.role === "assistant")
      callOrder = message.content.flatMap((b) => (b.type === "tool_call" ? [b.id] : []));
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

function convertOne(
  message: NewMessage,
  attachments: AttachmentData | undefined,
  missing: { any: boolean },
): OpenAIMessage[] {
  switch (message.role) {
    case "user": {
      const parts = message.content.flatMap((b) => userPart(b, attachments, missing));
      if (parts.length === 0) return [];
      // One text is sent as a plain string, which every compatible server
      // accepts; several keep their boundaries as parts.
      const only = parts.length === 1 ? parts[0]! : null;
      return [{ role: "user", content: only?.type === "text" ? only.text : parts }];
    }
    case "assistant": {
      const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      const toolCalls = message.content.flatMap((b) =>
        b.type === "tool_call"
          ? [
              {
                id: b.id,
                type: "function" as const,
                function: { name: b.name, arguments: b.raw_arguments ?? JSON.stringify(b.input) },
              },
            ]
          : [],
      );
      if (text === "" && toolCalls.length === 0) return [];
      return [
        {
          role: "assistant",
          content: text === "" ? null : text,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
      ];
    }
    case "tool":
      // Chat Completions' tool messages take no images: a tool's images are told in words after its text.
      return message.content.map((result) => ({
        role: "tool",
        tool_call_id: result.tool_call_id,
        content: toolResultContent(result) + toolImagesInWords(result),
      }));
  }
}

function userPart(b: UserBlock, attachments: AttachmentData | undefined, missing: { any: boolean }): UserPart[] {
  if (b.type === "text") return b.text === "" ? [] : [{ type: "text", text: b.text }];
  if (!isAttached(b)) return [{ type: "image_url", image_url: { url: b.source.url } }];
  const data = attachmentBase64(b, attachments);
  if (data === null) {
    missing.any = true;
    return [{ type: "text", text: notLoaded(b) }];
  }
  if (b.type === "image") return [{ type: "image_url", image_url: { url: `data:${b.media_type};base64,${data}` } }];
  if (b.media_type === "application/pdf") {
    return [
      {
        type: "file",
        file: { filename: b.title ?? `${b.attachment_id}.pdf`, file_data: `data:application/pdf;base64,${data}` },
      },
    ];
  }
  const text = textOfBase64(data);
  return [{ type: "text", text: b.title === undefined ? text : `${b.title}\n\n${text}` }];
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
