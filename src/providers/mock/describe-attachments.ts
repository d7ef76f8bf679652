import { isAttached, type UserBlock } from "../../core/messages.js";
import { imageInWords } from "../shared/attachment-data.js";

/** What the mock was shown besides text, in words ("an image/png of 64×64 pixels"); "" when nothing. */
export function describeAttachments(blocks: readonly UserBlock[]): string {
  const seen = blocks.flatMap((b): string[] => {
    if (b.type === "text") return [];
    if (!isAttached(b)) return [`an image at ${b.source.url}`];
    if (b.type === "image") return [imageInWords(b)];
    return [`a ${b.media_type} document of ${b.bytes} bytes${b.title === undefined ? "" : ` titled "${b.title}"`}`];
  });
  return seen.length === 0 ? "" : `You showed me ${seen.join(", ")}. `;
}
