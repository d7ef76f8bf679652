import type { DocumentInput, ImageInput, UserInputBlock } from "../core/attachment-input.js";
import type { ImageUrlBlock, TextBlock } from "../core/messages.js";
import { AppError } from "../errors.js";
import { isPgSafe } from "../store/pg-safe.js";
import { checkMediaBytes, isMediaFault, type CheckedMedia } from "./check-media-bytes.js";

/** An attachment whose bytes were checked, to be stored. */
export interface CheckedAttachment extends CheckedMedia {
  type: "image" | "document";
  title: string | undefined;
}

/** A user message's blocks once checked: text and URL images as they came, attachments ready to store. */
export type CheckedBlock = TextBlock | ImageUrlBlock | CheckedAttachment;

export interface AttachmentLimits {
  /** The most bytes one attachment may have (`MAX_ATTACHMENT_BYTES`). */
  maxBytes: number;
  /** The most images and documents one message may hold (`MAX_ATTACHMENTS_PER_MESSAGE`). */
  maxCount: number;
}

/**
 * Checks what a user message attaches: at most `maxCount` of them, each
 * strict base64 of at most `maxBytes` bytes that are what its `media_type`
 * says (by their magic number; a whole image whose size can be read; a PDF
 * that starts with `%PDF-`; text that is UTF-8 without NUL), and a URL that
 * is http(s). Any fault is a 400 naming the block (`body.content[i]`, or
 * the field `fieldOf` gives for the block's index: where the request held it).
 */
export async function checkUserContent(
  blocks: readonly UserInputBlock[],
  {
    fieldOf = (i) => `body.content[${i}]`,
    ...limits
  }: AttachmentLimits & { fieldOf?: ((index: number) => string) | undefined },
): Promise<CheckedBlock[]> {
  let count = 0;
  const checked: CheckedBlock[] = [];
  for (const [i, block] of blocks.entries()) {
    if (block.type === "text") {
      checked.push(block);
      continue;
    }
    const field = fieldOf(i);
    const fail = (message: string, details: Record<string, unknown> = {}) =>
      new AppError("invalid_request", `${field}: ${message}`, { field, ...details });
    if (++count > limits.maxCount)
      throw fail(`a message may hold at most ${limits.maxCount} images and documents (MAX_ATTACHMENTS_PER_MESSAGE)`, {
        limit: limits.maxCount,
      });
    if (block.type === "image" && block.source.type === "url") {
      const { url } = block.source;
      if (!isPgSafe(url) || !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
        throw fail("the image's url must be an http:// or https:// URL");
      checked.push({ type: "image", source: { type: "url", url } });
      continue;
    }
    checked.push(
      await checkBytes(block as (ImageInput & { source: { type: "base64" } }) | DocumentInput, limits, fail),
    );
  }
  return checked;
}

async function checkBytes(
  block: (ImageInput & { source: { type: "base64" } }) | DocumentInput,
  { maxBytes }: AttachmentLimits,
  fail: (message: string, details?: Record<string, unknown>) => AppError,
): Promise<CheckedAttachment> {
  const title = block.type === "document" ? block.title : undefined;
  if (title !== undefined && !isPgSafe(title))
    throw fail("title must not contain NUL characters or unpaired surrogates");
  const checked = await checkMediaBytes({
    kind: block.type,
    mediaType: block.source.media_type,
    data: block.source.data,
    maxBytes,
  });
  if (isMediaFault(checked)) throw fail(checked.fault, checked.limit === undefined ? {} : { limit: checked.limit });
  return { type: block.type, ...checked, title };
}
