import { crc32 } from "node:zlib";

/**
 * Why an image's bytes are not a whole file of their type, or null when
 * they are: a PNG's chunks up to IEND, each with a matching CRC; a JPEG's
 * end-of-image marker; a GIF's trailer; a WebP's RIFF size. A file cut short
 * (an upload that stopped) has the right magic number, but no model can read it.
 */
export function whyIncomplete(mediaType: string, bytes: Buffer): string | null {
  switch (mediaType) {
    case "image/png":
      return pngProblem(bytes);
    case "image/jpeg":
      return bytes.length >= 4 && bytes[bytes.length - 2] === 0xff && bytes[bytes.length - 1] === 0xd9
        ? null
        : "is cut short: no JPEG end-of-image marker";
    case "image/gif":
      return bytes[bytes.length - 1] === 0x3b ? null : "is cut short: no GIF trailer";
    case "image/webp":
      return bytes.length >= 12 && bytes.readUInt32LE(4) + 8 === bytes.length
        ? null
        : "is cut short: its RIFF size is not its length";
    default:
      return null;
  }
}

function pngProblem(bytes: Buffer): string | null {
  let at = 8;
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const end = at + 12 + length;
    if (end > bytes.length) return "is cut short: a PNG chunk runs past the end";
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== bytes.readUInt32BE(at + 8 + length))
      return "is corrupt: a PNG chunk's CRC does not match";
    if (bytes.toString("latin1", at + 4, at + 8) === "IEND") return null;
    at = end;
  }
  return "is cut short: no PNG IEND chunk";
}
