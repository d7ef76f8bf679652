import type { ImageBlock } from "../../core/messages.js";
import { ToolErrorResult, ToolResultWithImages, type ImageKeeper } from "../define-tool.js";

/** A content block of an MCP tool result, as far as loopd reads it. */
interface ContentBlock {
  type: string;
  text?: unknown;
  mimeType?: unknown;
  data?: unknown;
  uri?: unknown;
  resource?: { uri?: unknown; text?: unknown; blob?: unknown; mimeType?: unknown };
}

export interface McpCallResult {
  content?: ContentBlock[] | undefined;
  structuredContent?: unknown;
  isError?: boolean | undefined;
}

/**
 * An MCP tool result as the model reads it: the text parts joined;
 * `structuredContent` as JSON when there is no text; images kept with
 * `keepImages` (the result then holds them besides its text), an image that
 * cannot be kept, audio and resources described (never dropped silently).
 * `isError: true` is thrown as an error result with the server's words.
 */
export async function mcpResult(
  result: McpCallResult,
  keepImages?: ImageKeeper,
): Promise<string | ToolResultWithImages> {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const hasText = blocks.some((b) => b.type === "text");
  const images = result.isError === true || !keepImages ? [] : blocks.filter(isImage);
  const kept =
    images.length === 0 ? [] : await keepImages!(images.map((b) => ({ mediaType: b.mimeType, data: b.data })));
  const parts: string[] = [];
  const attached: ImageBlock[] = [];
  for (const block of blocks) {
    const at = images.indexOf(block as ImageContent);
    const outcome = at < 0 ? undefined : kept[at];
    if (outcome === undefined) parts.push(describe(block));
    else if ("refused" in outcome)
      parts.push(`${describe(block).slice(0, -1)}: it could not be kept: ${outcome.refused}]`);
    else attached.push(outcome);
  }
  if (!hasText && result.structuredContent !== undefined) parts.unshift(JSON.stringify(result.structuredContent));
  const text = parts.join("\n");
  if (result.isError === true) throw new ToolErrorResult(text || "the tool failed and said nothing more");
  if (attached.length > 0)
    return new ToolResultWithImages(
      text || `(the tool returned ${attached.length === 1 ? "an image" : `${attached.length} images`})`,
      attached,
    );
  return text || "(the tool returned no content)";
}

type ImageContent = ContentBlock & { type: "image"; mimeType: string; data: string };
const isImage = (block: ContentBlock): block is ImageContent =>
  block.type === "image" && typeof block.mimeType === "string" && typeof block.data === "string";

function describe(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? block.text : "";
    case "image":
    case "audio":
      return `[${block.type} ${typeof block.mimeType === "string" ? block.mimeType : "of unknown type"}, ${bytesOf(block.data).toLocaleString("en-US")} bytes]`;
    case "resource": {
      const r = block.resource ?? {};
      if (typeof r.text === "string") return r.text;
      const size = typeof r.blob === "string" ? `, ${bytesOf(r.blob).toLocaleString("en-US")} bytes` : "";
      return `[resource ${String(r.uri)}${typeof r.mimeType === "string" ? ` ${r.mimeType}` : ""}${size}]`;
    }
    case "resource_link":
      return `[resource ${String(block.uri)}]`;
    default:
      return `[${String(block.type).slice(0, 40)} content]`;
  }
}

/** The size of base64 data, decoded. */
function bytesOf(data: unknown): number {
  if (typeof data !== "string") return 0;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
