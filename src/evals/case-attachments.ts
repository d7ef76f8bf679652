import type { UserInputBlock } from "../core/attachment-input.js";
import { isAttached, type AttachmentData, type NewMessage, type UserBlock } from "../core/messages.js";

/**
 * A case is a file that runs on any loopd: the images and documents of its
 * history and input go in it as a client sends them (base64 sources), not as
 * references to a conversation's stored attachments. A tool result's images
 * are left out (the text of the result stays): no request can send them.
 */
export function withInlineAttachments<M extends NewMessage>(message: M, data: AttachmentData): M {
  if (message.role === "tool") {
    const [result] = message.content;
    if (!result.images) return message;
    const { images: _images, ...rest } = result;
    return { ...message, content: [rest] };
  }
  if (message.role !== "user" || !message.content.some(isAttached)) return message;
  return { ...message, content: inlineBlocks(message.content, data) as unknown as UserBlock[] };
}

/** A user message's blocks as a client sends them; an attachment whose bytes were not read stays a reference (the run says it was not loaded). */
export function inlineBlocks(blocks: readonly UserBlock[], data: AttachmentData): (UserBlock | UserInputBlock)[] {
  return blocks.map((b) => {
    const bytes = isAttached(b) ? data.get(b.attachment_id) : undefined;
    if (!isAttached(b) || bytes === undefined) return b;
    if (b.type === "image") return { type: "image", source: { type: "base64", media_type: b.media_type, data: bytes } };
    return {
      type: "document",
      source: { type: "base64", media_type: b.media_type, data: bytes },
      ...(b.title !== undefined && { title: b.title }),
    };
  });
}

/** Whether a case's message holds blocks to store before it is written (base64 sources). */
export const hasInlineAttachments = (content: readonly { type: string }[]): boolean =>
  content.some((b) => "source" in b && (b as { source: { type: string } }).source.type === "base64");
