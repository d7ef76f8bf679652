import type { AttachedBlock, AttachmentData, ImageBlock, ToolResultBlock } from "../../core/messages.js";

/**
 * The base64 of an attached block, from what the caller loaded; null when it
 * was not loaded (a history rebuilt without its attachments, for a trace):
 * the block is then sent as a note saying so, and its conversion not kept.
 */
export function attachmentBase64(block: AttachedBlock, attachments: AttachmentData | undefined): string | null {
  return attachments?.get(block.attachment_id) ?? null;
}

/** An image in words ("an image/png of 64×64 pixels"): what the mock says it was shown. */
export const imageInWords = (image: ImageBlock): string =>
  `an ${image.media_type} of ${image.width}×${image.height} pixels`;

/**
 * A tool result's images as text, a line each ("[an image/png of 64×64
 * pixels, attachment att_…]"): what a provider whose tool results take no
 * images is sent instead; "" when it has none.
 */
export const toolImagesInWords = (result: ToolResultBlock): string =>
  (result.images ?? []).map((image) => `\n[${imageInWords(image)}, attachment ${image.attachment_id}]`).join("");

/** What stands for an attachment whose bytes were not loaded. */
export const notLoaded = (block: AttachedBlock): string =>
  `[${block.type} ${block.attachment_id} (${block.media_type}) not loaded]`;

/** A text/plain document's text, from its base64 (checked as UTF-8 when it was saved). */
export const textOfBase64 = (base64: string): string => Buffer.from(base64, "base64").toString("utf8");
