import type Anthropic from "@anthropic-ai/sdk";
import {
  isAttached,
  type AttachedBlock,
  type AttachmentData,
  type NewMessage,
  type UserBlock,
} from "../../core/messages.js";
import { attachmentBase64, notLoaded, textOfBase64 } from "../shared/attachment-data.js";

type ContentBlockParam = Anthropic.ContentBlockParam;
type TextBlockParam = Anthropic.TextBlockParam;
type ImageBlockParam = Anthropic.ImageBlockParam;
type DocumentBlockParam = Anthropic.DocumentBlockParam;
type AnthropicTurn = { role: "user" | "assistant"; content: ContentBlockParam[] };

/**
 * Canonical history → Anthropic `messages`.
 *
 * - `tool_call` → `tool_use`; each tool message → a `tool_result` block in a
 *   **user** turn (Anthropic has no tool role).
 * - Consecutive turns of one role are merged into one, so consecutive tool
 *   results share one user turn and a user message right after tool results
 *   joins that turn after the results: roles alternate, and the results stay
 *   at the start of the turn that follows the `tool_use`, as the API requires.
 * - Images and documents become image and document blocks, with the bytes
 *   of `attachments` (a URL image is passed as its URL); a tool result's
 *   images go inside its `tool_result`, after its text.
 * - Empty or whitespace-only text blocks are dropped (the API rejects them); a
 *   message left with no blocks is dropped whole rather than sent empty.
 */
export function convertToAnthropicMessages(
  messages: readonly NewMessage[],
  attachments?: AttachmentData,
): Anthropic.MessageParam[] {
  const turns: AnthropicTurn[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    let blocks = CONVERTED.get(message);
    if (!blocks) {
      const missing = { any: false };
      blocks = toBlocks(message, attachments, missing);
      if (!missing.any) CONVERTED.set(message, blocks);
    }
    if (blocks.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: [...blocks] });
  }
  for (let i = 1; i < turns.length; i++) if (turns[i]!.role === "user") resultsInCallOrder(turns[i - 1]!, turns[i]!);
  return turns;
}

/**
 * Puts a user turn's tool results in the order the model made the calls:
 * results are saved as they come (a paused call's after the others), but
 * the model reads them back in its own order. (The turn's array is this
 * request's own; its blocks are not changed.)
 */
function resultsInCallOrder(assistant: AnthropicTurn, user: AnthropicTurn): void {
  const order = assistant.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []));
  const rank = (b: ContentBlockParam) =>
    b.type === "tool_result" ? order.indexOf(b.tool_use_id) : Number.MAX_SAFE_INTEGER;
  if (user.content.some((b, i) => i > 0 && rank(b) < rank(user.content[i - 1]!)))
    user.content.sort((a, b) => rank(a) - rank(b));
}

/**
 * Each message's blocks, kept as long as the message is: a run calls the
 * model again and again with its history in memory, so each call converts
 * only what the last step added. The blocks are shared between requests:
 * whoever changes one (a cache breakpoint) must copy it first.
 */
const CONVERTED = new WeakMap<NewMessage, ContentBlockParam[]>();

function toBlocks(
  message: NewMessage,
  attachments: AttachmentData | undefined,
  missing: { any: boolean },
): ContentBlockParam[] {
  switch (message.role) {
    case "user":
      return message.content.flatMap((b) => userBlock(b, attachments, missing));
    case "assistant":
      return message.content.flatMap((b): ContentBlockParam[] => {
        if (b.type === "text") return b.text.trim() === "" ? [] : [{ type: "text", text: b.text }];
        // A call whose arguments were not a JSON object replays as `{}`:
        // Anthropic only accepts an object here.
        return [{ type: "tool_use", id: toAnthropicToolId(b.id), name: b.name, input: b.input }];
      });
    case "tool":
      return message.content.map((b) => ({
        type: "tool_result",
        tool_use_id: toAnthropicToolId(b.tool_call_id),
        // An empty result is sent without `content` (optional in the API)
        // rather than as an empty string; a result with images as its text, then each image.
        ...(b.images?.length
          ? {
              content: [
                ...(b.content.trim() === "" ? [] : [{ type: "text" as const, text: b.content }]),
                ...b.images.map((image) => attachedBlock(image, attachments, missing)),
              ],
            }
          : b.content === ""
            ? {}
            : { content: b.content }),
        is_error: b.is_error,
      }));
  }
}

function userBlock(
  b: UserBlock,
  attachments: AttachmentData | undefined,
  missing: { any: boolean },
): ContentBlockParam[] {
  if (b.type === "text") return b.text.trim() === "" ? [] : [{ type: "text", text: b.text }];
  if (!isAttached(b)) return [{ type: "image", source: { type: "url", url: b.source.url } }];
  return [attachedBlock(b, attachments, missing)];
}

/** An attachment as its image or document block, with its bytes; a note when they were not loaded. */
function attachedBlock(
  b: AttachedBlock,
  attachments: AttachmentData | undefined,
  missing: { any: boolean },
): TextBlockParam | ImageBlockParam | DocumentBlockParam {
  const data = attachmentBase64(b, attachments);
  if (data === null) {
    missing.any = true;
    return { type: "text", text: notLoaded(b) };
  }
  if (b.type === "image") return { type: "image", source: { type: "base64", media_type: b.media_type, data } };
  const title = b.title === undefined ? {} : { title: b.title };
  if (b.media_type === "application/pdf")
    return { type: "document", source: { type: "base64", media_type: "application/pdf", data }, ...title };
  return { type: "document", source: { type: "text", media_type: "text/plain", data: textOfBase64(data) }, ...title };
}

/**
 * Ids are kept verbatim, except that Anthropic only accepts
 * `^[a-zA-Z0-9_-]+$`: ids from another provider (some OpenAI-compatible
 * servers use `functions.get_time:0`) are made valid the same way on the
 * `tool_use` and its `tool_result`, so the pair still matches.
 */
export function toAnthropicToolId(id: string): string {
  if (/^[a-zA-Z0-9_-]+$/.test(id)) return id;
  const cleaned = id.replace(/[^a-zA-Z0-9_-]/g, "_");
  return cleaned === "" ? "toolu_empty" : cleaned;
}
