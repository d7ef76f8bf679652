import { MAX_DOCUMENT_TITLE_CHARS, MAX_IMAGE_URL_CHARS, type UserInputBlock } from "../../core/attachment-input.js";
import { DOCUMENT_MEDIA_TYPES, IMAGE_MEDIA_TYPES, type DocumentBlock } from "../../core/messages.js";
import { AppError } from "../../errors.js";

/** A content part of an input message, as a client sends it (to `/v1/responses` or `/v1/conversations`). */
export type InputPart =
  | { type: "input_text" | "output_text"; text: string }
  | { type: "input_image"; image_url?: string | null | undefined; file_id?: string | null | undefined }
  | {
      type: "input_file";
      filename?: string | null | undefined;
      file_data?: string | null | undefined;
      file_url?: string | null | undefined;
      file_id?: string | null | undefined;
    };

const IMAGE_URL = "image_url (a data: URL, or an http(s) URL the model's provider reads)";
const FILE_DATA = "file_data (a data: URL, or base64 with a filename ending .pdf or .txt)";
const IMAGE_TYPES: readonly string[] = IMAGE_MEDIA_TYPES;
const DOCUMENT_TYPES: readonly string[] = DOCUMENT_MEDIA_TYPES;

/** A 400 naming the item's field (`param`, under `body.`). */
export const invalidItem = (param: string, message: string) =>
  new AppError("invalid_request", `${param}: ${message}`, { field: `body.${param}` });

/**
 * A content part as loopd's block: text; an image by data URL or http(s) URL;
 * a file by base64 data (a data: URL, or bare base64 typed by its filename).
 * The media type is checked against the bytes when the message is stored.
 */
export function blockOfPart(part: InputPart, param: string): UserInputBlock {
  switch (part.type) {
    case "input_text":
    case "output_text":
      return { type: "text", text: part.text };
    case "input_image": {
      const url = part.image_url;
      if ((url == null || url === "") && part.file_id != null) throw noFilesApi(`${param}.file_id`, IMAGE_URL);
      if (typeof url !== "string" || url === "")
        throw invalidItem(param, "an input_image needs image_url: a data: URL (base64) or an http(s) URL");
      if (/^https?:\/\//i.test(url)) {
        if (url.length > MAX_IMAGE_URL_CHARS)
          throw invalidItem(param, `an image's URL must be at most ${MAX_IMAGE_URL_CHARS} characters`);
        return { type: "image", source: { type: "url", url } };
      }
      const data = dataUrl(url, param);
      if (!IMAGE_TYPES.includes(data.mediaType))
        throw invalidItem(param, `an image must be one of ${IMAGE_TYPES.join(", ")}, not ${data.mediaType}`);
      return {
        type: "image",
        source: { type: "base64", media_type: data.mediaType as (typeof IMAGE_MEDIA_TYPES)[number], data: data.data },
      };
    }
    case "input_file": {
      if (typeof part.file_data !== "string" || part.file_data === "") {
        if (part.file_id != null) throw noFilesApi(`${param}.file_id`, FILE_DATA);
        if (part.file_url != null)
          throw invalidItem(
            `${param}.file_url`,
            `loopd does not fetch files by URL (it never fetches a URL a client sends); send the file's bytes as ${FILE_DATA}`,
          );
        throw invalidItem(param, "an input_file needs file_data (a data: URL, or base64 with a filename)");
      }
      const data = part.file_data.startsWith("data:")
        ? dataUrl(part.file_data, param)
        : { mediaType: mediaTypeOfName(part.filename), data: part.file_data };
      if (!DOCUMENT_TYPES.includes(data.mediaType))
        throw invalidItem(param, `a file must be one of ${DOCUMENT_TYPES.join(", ")}, not ${data.mediaType}`);
      if (part.filename && part.filename.length > MAX_DOCUMENT_TITLE_CHARS)
        throw invalidItem(param, `a file's filename must be at most ${MAX_DOCUMENT_TITLE_CHARS} characters`);
      return {
        type: "document",
        source: { type: "base64", media_type: data.mediaType as DocumentBlock["media_type"], data: data.data },
        ...(part.filename ? { title: part.filename } : {}),
      };
    }
  }
}

/** A file named by id: loopd keeps no files apart from messages, so the id names nothing here. */
const noFilesApi = (param: string, instead: string) =>
  invalidItem(param, `loopd has no Files API, so a file_id names no file here; send the content itself as ${instead}`);

function dataUrl(url: string, param: string): { mediaType: string; data: string } {
  const comma = url.indexOf(",");
  const head = comma < 0 ? "" : url.slice(5, comma);
  if (!url.startsWith("data:") || comma < 0 || head.split(";").at(-1)?.toLowerCase() !== "base64")
    throw invalidItem(param, "must be a base64 data: URL (data:<media type>;base64,…) or an http(s) URL");
  return { mediaType: head.split(";")[0]!.trim().toLowerCase(), data: url.slice(comma + 1) };
}

const mediaTypeOfName = (name: string | null | undefined) =>
  name?.toLowerCase().endsWith(".pdf")
    ? "application/pdf"
    : name?.toLowerCase().endsWith(".txt")
      ? "text/plain"
      : "application/octet-stream";
