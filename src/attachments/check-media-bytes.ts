import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { fileTypeFromBuffer } from "file-type";
import { imageSize } from "image-size";
import { whyIncomplete } from "./check-complete.js";
import { decodeBase64 } from "./decode-base64.js";

/** Bytes checked to be what their media type says, ready to store. */
export interface CheckedMedia {
  mediaType: string;
  data: Buffer;
  sha256: string;
  /** An image's size in pixels; null for a document. */
  width: number | null;
  height: number | null;
}

/** The largest image the providers take: 8000 px on a side, 50 megapixels (Anthropic's bounds; OpenAI's are lower and it scales down itself). */
export const MAX_IMAGE_SIDE_PX = 8_000;
export const MAX_IMAGE_PIXELS = 50_000_000;

/** What is wrong with the bytes, in words that follow their name ("is empty (0 bytes)"); `limit` when a limit was passed. */
export interface MediaFault {
  fault: string;
  limit?: number;
}

/**
 * Whether base64 `data` is a file loopd keeps as `mediaType`: strict base64
 * of at most `maxBytes` bytes that are what the type says (by their magic
 * number; a whole image whose size can be read; a PDF that starts with
 * `%PDF-`; text that is UTF-8 without NUL; an image a provider can take, at
 * most 8000 px on a side and 50 megapixels). The same checks for what a user
 * attaches and for an image a tool returns.
 */
export async function checkMediaBytes({
  kind,
  mediaType,
  data: text,
  maxBytes,
}: {
  kind: "image" | "document";
  mediaType: string;
  data: string;
  maxBytes: number;
}): Promise<CheckedMedia | MediaFault> {
  const overLimit = {
    fault: `is over the ${maxBytes} bytes an attachment may have (MAX_ATTACHMENT_BYTES)`,
    limit: maxBytes,
  };
  // Past the limit, whatever the base64 holds: not decoded at all.
  if (Math.floor((text.length * 3) / 4) - 2 > maxBytes) return overLimit;
  const data = decodeBase64(text);
  if (data === null) return { fault: "source.data is not base64 (RFC 4648, padded, without line breaks)" };
  if (data.length === 0) return { fault: "is empty (0 bytes)" };
  if (data.length > maxBytes) return overLimit;
  let width: number | null = null;
  let height: number | null = null;
  if (kind === "image" || mediaType === "application/pdf") {
    const found = await fileTypeFromBuffer(data);
    if (found?.mime !== mediaType)
      return { fault: `is not ${mediaType}: its bytes are ${found ? found.mime : "of no type loopd knows"}` };
  }
  if (kind === "image") {
    const incomplete = whyIncomplete(mediaType, data);
    if (incomplete !== null) return { fault: `${incomplete} (${mediaType})` };
    const size = sizeOf(data);
    if (!size) return { fault: `is not a ${mediaType} whose size can be read` };
    ({ width, height } = size);
    // Told from the header alone: a few bytes may claim a size no provider takes (and no decoder should try).
    if (width > MAX_IMAGE_SIDE_PX || height > MAX_IMAGE_SIDE_PX || width * height > MAX_IMAGE_PIXELS) {
      return {
        fault: `is ${width}×${height} pixels: an image may have at most ${MAX_IMAGE_SIDE_PX} px on a side and ${MAX_IMAGE_PIXELS / 1_000_000} megapixels`,
        limit: MAX_IMAGE_PIXELS,
      };
    }
  } else if (mediaType === "application/pdf") {
    if (data.toString("latin1", 0, 5) !== "%PDF-") return { fault: "is not a PDF: it does not start with %PDF-" };
  } else if (!isUtf8Text(data)) {
    return { fault: "is not text/plain: it must be UTF-8 without NUL bytes" };
  }
  return { mediaType, data, sha256: createHash("sha256").update(data).digest("hex"), width, height };
}

export const isMediaFault = (checked: CheckedMedia | MediaFault): checked is MediaFault => "fault" in checked;

function sizeOf(data: Buffer): { width: number; height: number } | null {
  try {
    const { width, height } = imageSize(data);
    return width > 0 && height > 0 ? { width, height } : null;
  } catch {
    return null;
  }
}

const isUtf8Text = (data: Buffer): boolean => !data.includes(0) && isUtf8(data);
