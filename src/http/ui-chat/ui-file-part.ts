import { DOCUMENT_MEDIA_TYPES, IMAGE_MEDIA_TYPES, type DocumentBlock } from "../../core/messages.js";
import {
  MAX_DOCUMENT_TITLE_CHARS as MAX_TITLE,
  MAX_IMAGE_URL_CHARS as MAX_URL,
  type UserInputBlock,
} from "../../core/attachment-input.js";
import { AppError } from "../../errors.js";

/** An AI SDK file part as a client sends it (`convertFileListToFileUIParts` makes its url a data URL). */
export interface UiFilePart {
  mediaType?: string | undefined;
  url?: string | undefined;
  filename?: string | undefined;
}

const DOCUMENT_TYPES: readonly string[] = DOCUMENT_MEDIA_TYPES;
const IMAGE_TYPES: readonly string[] = IMAGE_MEDIA_TYPES;

/**
 * A user message's file part as the block `POST …/messages` would take for
 * it: a base64 data URL of an image or a document (the filename its title),
 * or an http(s) URL of an image. Its bytes are checked later, with the
 * message's other blocks. Anything else is a 400 naming the part (`field`).
 */
export function blockOfFilePart(part: UiFilePart, field: string): UserInputBlock {
  const fail = (message: string) => new AppError("invalid_request", `${field}: ${message}`, { field });
  // A media type may come with parameters (`text/plain;charset=utf-8`): the type decides.
  const mediaType = (part.mediaType ?? "").split(";")[0]!.trim().toLowerCase();
  const { url } = part;
  if (typeof url !== "string" || url === "") throw fail("a file part needs its url: a data: URL or an http(s) URL");
  if (/^https?:\/\//i.test(url)) {
    // The provider fetches it (loopd never does) and the saved block has no media type: any image's will do.
    if (!mediaType.startsWith("image/"))
      throw fail(
        `a file by its URL must be an image (image/…), not ${JSON.stringify(part.mediaType ?? "")}: send a document as a data: URL`,
      );
    if (url.length > MAX_URL) throw fail(`the url must be at most ${MAX_URL} characters`);
    return { type: "image", source: { type: "url", url } };
  }
  if (!url.startsWith("data:")) throw fail("the url must be a data: URL (base64) or an http(s) URL");
  const comma = url.indexOf(",");
  if (comma < 0 || url.slice(5, comma).split(";").at(-1)?.toLowerCase() !== "base64")
    throw fail("the data: URL must be base64 (data:<media type>;base64,…)");
  const data = url.slice(comma + 1);
  if (IMAGE_TYPES.includes(mediaType))
    return {
      type: "image",
      source: { type: "base64", media_type: mediaType as (typeof IMAGE_MEDIA_TYPES)[number], data },
    };
  if (DOCUMENT_TYPES.includes(mediaType)) {
    if (part.filename !== undefined && part.filename.length > MAX_TITLE)
      throw fail(`the filename must be at most ${MAX_TITLE} characters`);
    return {
      type: "document",
      source: { type: "base64", media_type: mediaType as DocumentBlock["media_type"], data },
      ...(part.filename !== undefined && { title: part.filename }),
    };
  }
  throw fail(
    `a file of type ${JSON.stringify(part.mediaType ?? "")} cannot be attached: images (${IMAGE_TYPES.join(", ")}), application/pdf and text/plain can`,
  );
}
