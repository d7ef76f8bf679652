import { isBase64 } from "../../../src/attachments/decode-base64.js";
import type { JsonObject } from "./json-object.js";

/**
 * Images and documents as the real APIs check them: the base64 must decode
 * (strictly: the APIs refuse what Buffer.from would quietly skip) to bytes
 * of the media type declared.
 */

const MAGIC: Record<string, (b: Buffer) => boolean> = {
  "image/png": (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  "image/jpeg": (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  "image/gif": (b) => b.toString("latin1", 0, 4) === "GIF8",
  "image/webp": (b) => b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP",
  "application/pdf": (b) => b.toString("latin1", 0, 5) === "%PDF-",
};

/** Why base64 `data` is not a `mediaType` file, or null when it is. */
export function base64Problem(mediaType: unknown, data: unknown): string | null {
  if (typeof mediaType !== "string" || !(mediaType in MAGIC)) return `unsupported media type: ${String(mediaType)}`;
  if (typeof data !== "string" || data === "" || !isBase64(data)) return "invalid base64 data";
  if (!MAGIC[mediaType]!(Buffer.from(data, "base64")))
    return `the data was specified using the ${mediaType} media type, but does not appear to be one`;
  return null;
}

/** An Anthropic image or document block's problem (`where`: its path), or null. */
export function anthropicMediaProblem(block: JsonObject, where: string): string | null {
  if (block.type !== "image" && block.type !== "document") return null;
  const source = block.source as JsonObject | undefined;
  if (source?.type === "url")
    return typeof source.url === "string" && /^https?:\/\//.test(source.url)
      ? null
      : `${where}.source.url: must be an http(s) URL`;
  if (source?.type === "text" && block.type === "document")
    return typeof source.data === "string" ? null : `${where}.source.data: must be a string`;
  if (source?.type !== "base64") return `${where}.source: unknown source type ${String(source?.type)}`;
  const problem = base64Problem(source.media_type, source.data);
  return problem === null ? null : `${where}.source.base64: ${problem}`;
}

/** An OpenAI user content part's problem (`where`: its path), or null. */
export function openAIPartProblem(part: JsonObject, where: string): string | null {
  if (part.type === "image_url") {
    const url = (part.image_url as JsonObject | undefined)?.url;
    if (typeof url === "string" && /^https?:\/\//.test(url)) return null;
    return dataUrlProblem(url, `${where}.image_url.url`);
  }
  if (part.type === "file")
    return dataUrlProblem((part.file as JsonObject | undefined)?.file_data, `${where}.file.file_data`);
  return null;
}

function dataUrlProblem(url: unknown, where: string): string | null {
  const match = typeof url === "string" ? /^data:([^;,]+);base64,(.*)$/s.exec(url) : null;
  if (!match) return `Invalid '${where}': expected an http(s) URL or a base64 data URL.`;
  const problem = base64Problem(match[1], match[2]);
  return problem === null ? null : `Invalid '${where}': ${problem}.`;
}
