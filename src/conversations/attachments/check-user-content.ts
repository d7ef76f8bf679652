import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { fileTypeFromBuffer } from "file-type";
import { imageSize } from "image-size";
import type { DocumentInput, ImageInput, UserInputBlock } from "../../core/attachment-input.js";
import type { ImageUrlBlock, TextBlock } from "../../core/messages.js";
import { AppError } from "../../errors.js";
import { isPgSafe } from "../../store/pg-safe.js";
import { decodeBase64 } from "./decode-base64.js";
import { whyIncomplete } from "./check-complete.js";

/** An attachment whose bytes were checked, to be stored. */
export interface CheckedAttachment {
  type: "image" | "document";
  mediaType: string;
  data: Buffer;
  sha256: string;
  width: number | null;
  height: number | null;
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
  { fieldOf = (i) => `body.content[${i}]`, ...limits }: AttachmentLimits & { fieldOf?: ((index: number) => string) | undefined },
): Promise<CheckedBlock[]> {
  let count = 0;
  const checked: CheckedBlock[] = [];
  for (const [i, block] of blocks.entries()) {
    if (block.type === "text") {
      checked.push(block);
      continue;
    }
    const field = fieldOf(i);
    const fail = (message: string, details: Record<string, unknown> = {}) => new AppError("invalid_request", `${field}: ${message}`, { field, ...details });
    if (++count > limits.maxCount) throw fail(`a message may hold at most ${limits.maxCount} images and documents (MAX_ATTACHMENTS_PER_MESSAGE)`, { limit: limits.maxCount });
    if (block.type === "image" && block.source.type === "url") {
      const { url } = block.source;
      if (!isPgSafe(url) || !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw fail("the image's url must be an http:// or https:// URL");
      checked.push({ type: "image", source: { type: "url", url } });
      continue;
    }
    checked.push(await checkBytes(block as ImageInput & { source: { type: "base64" } } | DocumentInput, limits, fail));
  }
  return checked;
}

async function checkBytes(
  block: (ImageInput & { source: { type: "base64" } }) | DocumentInput,
  { maxBytes }: AttachmentLimits,
  fail: (message: string, details?: Record<string, unknown>) => AppError,
): Promise<CheckedAttachment> {
  const { media_type: mediaType, data: text } = block.source;
  // Past the limit, whatever the base64 holds: not decoded at all.
  if (Math.floor((text.length * 3) / 4) - 2 > maxBytes) throw fail(`is over the ${maxBytes} bytes an attachment may have (MAX_ATTACHMENT_BYTES)`, { limit: maxBytes });
  const data = decodeBase64(text);
  if (data === null) throw fail("source.data is not base64 (RFC 4648, padded, without line breaks)");
  if (data.length === 0) throw fail("is empty (0 bytes)");
  if (data.length > maxBytes) throw fail(`is over the ${maxBytes} bytes an attachment may have (MAX_ATTACHMENT_BYTES)`, { limit: maxBytes });
  const title = block.type === "document" ? block.title : undefined;
  if (title !== undefined && !isPgSafe(title)) throw fail("title must not contain NUL characters or unpaired surrogates");
  let width: number | null = null;
  let height: number | null = null;
  if (block.type === "image" || mediaType === "application/pdf") {
    const found = await fileTypeFromBuffer(data);
    if (found?.mime !== mediaType) throw fail(`is not ${mediaType}: its bytes are ${found ? found.mime : "of no type loopd knows"}`);
  }
  if (block.type === "image") {
    const incomplete = whyIncomplete(mediaType, data);
    if (incomplete !== null) throw fail(`${incomplete} (${mediaType})`);
    const size = sizeOf(data);
    if (!size) throw fail(`is not a ${mediaType} whose size can be read`);
    ({ width, height } = size);
  } else if (mediaType === "application/pdf") {
    if (data.toString("latin1", 0, 5) !== "%PDF-") throw fail("is not a PDF: it does not start with %PDF-");
  } else if (!isUtf8Text(data)) {
    throw fail("is not text/plain: it must be UTF-8 without NUL bytes");
  }
  return { type: block.type, mediaType, data, sha256: createHash("sha256").update(data).digest("hex"), width, height, title };
}

function sizeOf(data: Buffer): { width: number; height: number } | null {
  try {
    const { width, height } = imageSize(data);
    return width > 0 && height > 0 ? { width, height } : null;
  } catch {
    return null;
  }
}

const isUtf8Text = (data: Buffer): boolean => !data.includes(0) && isUtf8(data);
