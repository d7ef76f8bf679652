import { describe, expect, test } from "vitest";
import { checkUserContent, type CheckedAttachment } from "../../src/attachments/check-user-content.js";
import type { UserInputBlock } from "../../src/core/attachment-input.js";
import { b64, exe, gif, jpeg, pdf, png, svg, webp } from "../support/helpers/test-images.js";

const LIMITS = { maxBytes: 5 * 1024 * 1024, maxCount: 10 };
const image = (media_type: "image/png" | "image/jpeg" | "image/gif" | "image/webp", data: string): UserInputBlock => ({
  type: "image",
  source: { type: "base64", media_type, data },
});
const doc = (media_type: "application/pdf" | "text/plain", data: string): UserInputBlock => ({
  type: "document",
  source: { type: "base64", media_type, data },
});

async function refusal(
  blocks: UserInputBlock[],
  limits = LIMITS,
): Promise<{ message: string; details: Record<string, unknown> }> {
  const err = await checkUserContent(blocks, limits).then(
    () => null,
    (e: unknown) => e as { code: string; message: string; details: Record<string, unknown> },
  );
  expect(err, "refused").not.toBeNull();
  expect(err!.code).toBe("invalid_request");
  return err!;
}

describe("checkUserContent", () => {
  test.each([
    ["image/png", png(64, 64), 64, 64],
    ["image/jpeg", jpeg(32, 16), 32, 16],
    ["image/gif", gif(10, 20), 10, 20],
    ["image/webp", webp(100, 50), 100, 50],
  ] as const)("a real %s is taken, its size read from its header", async (type, bytes, width, height) => {
    const [checked] = (await checkUserContent([image(type, b64(bytes))], LIMITS)) as CheckedAttachment[];
    expect(checked).toMatchObject({ type: "image", mediaType: type, width, height });
    expect(checked!.data.equals(bytes)).toBe(true);
  });

  test("a PDF and UTF-8 text are taken as documents", async () => {
    const checked = (await checkUserContent(
      [doc("application/pdf", b64(pdf())), doc("text/plain", b64(Buffer.from("héllo ✓")))],
      LIMITS,
    )) as CheckedAttachment[];
    expect(checked.map((c) => c.mediaType)).toEqual(["application/pdf", "text/plain"]);
  });

  test.each([
    [
      "bytes that are another type than declared",
      [image("image/png", b64(jpeg()))],
      /is not image\/png: its bytes are image\/jpeg/,
    ],
    ["a truncated PNG", [image("image/png", b64(png().subarray(0, 60)))], /cut short/],
    [
      "a PNG with a corrupt chunk",
      [image("image/png", b64(Buffer.concat([png().subarray(0, 40), Buffer.from([0]), png().subarray(41)])))],
      /corrupt|cut short/,
    ],
    ["a 0-byte file", [image("image/png", "")], /is empty/],
    ["an SVG declared as a PNG", [image("image/png", b64(svg()))], /is not image\/png/],
    [
      "an executable declared as a GIF",
      [image("image/gif", b64(exe()))],
      /is not image\/gif: its bytes are application\/x-msdownload/,
    ],
    [
      "a PDF that does not start with %PDF-",
      [doc("application/pdf", b64(Buffer.from("hello, not a pdf")))],
      /is not application\/pdf/,
    ],
    ["text with a NUL byte", [doc("text/plain", b64(Buffer.from("a\0b")))], /UTF-8 without NUL/],
    ["text that is not UTF-8", [doc("text/plain", b64(Buffer.from([0xc3, 0x28])))], /UTF-8/],
    ["base64 with characters Buffer.from would skip", [image("image/png", `${b64(png())}!!`)], /not base64/],
    ["base64 without its padding", [image("image/png", b64(png()).replace(/=+$/, "").slice(0, -1))], /not base64/],
    [
      "a URL that is not http(s)",
      [{ type: "image", source: { type: "url", url: "file:///etc/passwd" } } as UserInputBlock],
      /http:\/\/ or https:\/\//,
    ],
  ])("refused, naming the block: %s", async (_name, blocks, message) => {
    const err = await refusal([{ type: "text", text: "look" }, ...blocks]);
    expect(err.message).toMatch(/^body\.content\[1\]: /);
    expect(err.message).toMatch(message);
    expect(err.details.field).toBe("body.content[1]");
  });

  test("a file over MAX_ATTACHMENT_BYTES is refused with the limit", async () => {
    const err = await refusal([doc("application/pdf", b64(Buffer.concat([pdf(), Buffer.alloc(2000, 32)])))], {
      maxBytes: 1000,
      maxCount: 10,
    });
    expect(err.details).toMatchObject({ field: "body.content[0]", limit: 1000 });
  });

  test("more blocks than MAX_ATTACHMENTS_PER_MESSAGE: the first one over is named", async () => {
    const blocks = Array.from({ length: 3 }, (_, i) => image("image/png", b64(png(8, 8, i))));
    const err = await refusal(blocks, { maxBytes: LIMITS.maxBytes, maxCount: 2 });
    expect(err.details).toMatchObject({ field: "body.content[2]", limit: 2 });
  });
});
