import type { UserBlock } from "../core/messages.js";

/** Anthropic: about width × height / 750 tokens (after its own downscaling to at most 1568 px on the long side). */
export function anthropicImageTokens({ width, height }: { width: number; height: number }): number {
  const scale = Math.min(1, 1568 / Math.max(width, height, 1));
  return Math.ceil((Math.round(width * scale) * Math.round(height * scale)) / 750);
}

/**
 * OpenAI (high detail): scaled to fit 2048×2048, then its shortest side to
 * 768 (never scaled up); 85 tokens plus 170 per 512-px tile.
 */
export function openAIImageTokens({ width, height }: { width: number; height: number }): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h, 1));
  w *= fit;
  h *= fit;
  const shortest = Math.min(1, 768 / Math.max(Math.min(w, h), 1));
  w *= shortest;
  h *= shortest;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** A URL image's size is not known here: what a large image costs at most on either provider. */
const URL_IMAGE_TOKENS = 1600;

/**
 * A block of what a user attached, in tokens. The estimate serves any
 * provider, so an image counts what the dearer of the two rules says; a
 * document counts a token per four bytes.
 */
export function estimateAttachmentTokens(block: Exclude<UserBlock, { type: "text" }>): number {
  if (block.type === "document") return Math.ceil(block.bytes / 4);
  if (!("width" in block)) return URL_IMAGE_TOKENS;
  return Math.max(anthropicImageTokens(block), openAIImageTokens(block));
}
