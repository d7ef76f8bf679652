import { randomBytes } from "node:crypto";
import { crc32, deflateSync } from "node:zlib";

/** Small real files, made in code: each is what its name says, as far as the checks and the providers look. */

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A valid RGB PNG of `width`×`height`, a gradient (so two sizes never share bytes). */
export function png(width = 64, height = 64, seed = 0): Buffer {
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++)
      rows.set([(x + seed) & 255, (y * 4) & 255, (x ^ y) & 255], y * (width * 3 + 1) + 1 + x * 3);
  }
  return pngOf(width, height, deflateSync(rows));
}

/** A valid RGB PNG of noise, stored uncompressed: about 3 × width × height bytes. */
export function noisePng(width: number, height: number): Buffer {
  const rows = randomBytes((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) rows[y * (width * 3 + 1)] = 0; // each row's filter: none
  return pngOf(width, height, deflateSync(rows, { level: 0 }));
}

function pngOf(width: number, height: number, compressed: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    pngChunk("IHDR", header),
    pngChunk("IDAT", compressed),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A JPEG's frame: start of image, a baseline frame header giving its size, end of image. */
export function jpeg(width = 32, height = 16): Buffer {
  const sof = Buffer.from([
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 255,
    width >> 8,
    width & 255,
    0x03,
    1,
    0x22,
    0,
    2,
    0x11,
    1,
    3,
    0x11,
    1,
  ]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
    sof,
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** A GIF89a header, an empty image and the trailer. */
export function gif(width = 10, height = 20): Buffer {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  return Buffer.concat([Buffer.from("GIF89a", "latin1"), screen, Buffer.from([0x3b])]);
}

/** A WebP whose extended header (VP8X) gives its size. */
export function webp(width = 100, height = 50): Buffer {
  const vp8x = Buffer.alloc(10);
  vp8x.writeUIntLE(width - 1, 4, 3);
  vp8x.writeUIntLE(height - 1, 7, 3);
  const chunk = Buffer.concat([Buffer.from("VP8X", "latin1"), Buffer.from([10, 0, 0, 0]), vp8x]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(4 + chunk.length);
  return Buffer.concat([Buffer.from("RIFF", "latin1"), size, Buffer.from("WEBP", "latin1"), chunk]);
}

/** A minimal one-page PDF. */
export function pdf(text = "Hello"): Buffer {
  return Buffer.from(
    `%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n` +
      `3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Contents 4 0 R>>endobj\n` +
      `4 0 obj<</Length ${text.length + 24}>>stream\nBT /F1 12 Tf 10 10 Td (${text}) Tj ET\nendstream endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n`,
    "latin1",
  );
}

/** A Windows executable's first bytes (MZ header, PE signature). */
export function exe(): Buffer {
  const b = Buffer.alloc(256);
  b.write("MZ", 0, "latin1");
  b.writeUInt32LE(128, 0x3c);
  b.write("PE\0\0", 128, "latin1");
  return b;
}

export const svg = (): Buffer =>
  Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>');

export const b64 = (bytes: Buffer): string => bytes.toString("base64");

/**
 * A PNG whose header gives `width`×`height` and whose image data is one
 * black row: a few dozen bytes that claim any size, as a hostile file would.
 * (A PNG of grey 1-bit pixels, so the row is width / 8 bytes.)
 */
export function pngClaiming(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([1, 0, 0, 0, 0], 8); // 1-bit greyscale, no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const row = Buffer.alloc(1 + Math.ceil(width / 8));
  return Buffer.concat([
    signature,
    pngChunk("IHDR", header),
    pngChunk("IDAT", deflateSync(row)),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}
