/**
 * A 400 about one block of a message names it (`body.content[2]`), whatever
 * is wrong with it: its type, its fields, its bytes, its size in pixels.
 */
import { describe, expect, test } from "vitest";
import { api } from "../support/helpers/api.js";
import { expectError } from "../support/helpers/expect-error.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { b64, jpeg, png, pngClaiming } from "../support/helpers/test-images.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd();
const client = () => api(f.loopd.app);

const PNG = png(8, 8);
const image = (source: Record<string, unknown>) => ({ type: "image", source });
const base64Image = (media_type: string, data: string) => image({ type: "base64", media_type, data });

describe("a bad block at content[2]: a 400 naming it, nothing saved", () => {
  test.each([
    ["a type that is no block", { type: "video", url: "https://example.com/v.mp4" }],
    ["an image media_type loopd does not take", base64Image("image/bmp", b64(PNG))],
    ["an image without its data", image({ type: "base64", media_type: "image/png" })],
    ["a source type that is neither base64 nor url", image({ type: "file", path: "/etc/passwd" })],
    [
      "a document with an image's media type",
      { type: "document", source: { type: "base64", media_type: "image/png", data: b64(PNG) } },
    ],
    ["an empty text block", { type: "text", text: "" }],
    ["a text block without text", { type: "text" }],
    ["a field no block has", { type: "text", text: "hi", colour: "red" }],
    ["bytes that are not the media type", base64Image("image/png", b64(jpeg()))],
    ["base64 that is not base64", base64Image("image/png", "!!!!")],
    ["a URL that is not http(s)", image({ type: "url", url: "file:///etc/passwd" })],
    ["an image 20000 px on a side", base64Image("image/png", b64(pngClaiming(20_000, 20_000)))],
    ["an image 8001 px wide", base64Image("image/png", b64(pngClaiming(8_001, 10)))],
    ["an image of more than 50 megapixels", base64Image("image/png", b64(pngClaiming(7_500, 7_000)))],
  ])("%s", async (_name, block) => {
    const conv = await client().createConversation({ provider: "mock" });
    const before = await rowCounts(f.database);
    const res = await client().send(conv.id, {
      content: [{ type: "text", text: "look" }, base64Image("image/png", b64(PNG)), block],
    });
    const error = expectError(res, 400, "invalid_request");
    expect(error.details.field, error.message).toMatch(/^body\.content\[2\](\.|$)/);
    expect(error.message).toMatch(/^body\.content\[2\][.:]/);
    expect(await rowCounts(f.database)).toEqual(before);
  });

  test("an image at the bounds (8000 px on a side, 50 megapixels at most) is taken", async () => {
    const conv = await client().createConversation({ provider: "mock" });
    const res = await client().send(conv.id, { content: [base64Image("image/png", b64(pngClaiming(8_000, 6_250)))] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().messages[0].content[0]).toMatchObject({ width: 8_000, height: 6_250 });
  });
});
