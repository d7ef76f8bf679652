import type { NewMessage } from "../core/messages.js";
import type { ToolSpec } from "../core/model-provider.js";
import { anthropicImageTokens, estimateAttachmentTokens } from "./estimate-image-tokens.js";

/**
 * Token counts estimated locally, in one pass over the characters and
 * without a tokenizer's tables: what trimming needs is "about how big is
 * this request", cheaply, for any provider. The shapes follow byte-pair
 * tokenizers (o200k, Claude's): a common word with its leading space is one
 * token, long words and identifiers a token per ~4 letters, digits in groups
 * of three, punctuation runs a token per one or two characters, CJK about a
 * token per character. The provider's reported input tokens calibrate it
 * (see `calibrateTokens`).
 */
export function estimateTextTokens(text: string): number {
  let tokens = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isLetter(c) || isDigit(c)) {
      let j = i + 1;
      let letters = isLetter(c) ? 1 : 0;
      while (j < n && (isLetter(text.charCodeAt(j)) || isDigit(text.charCodeAt(j))))
        letters += isLetter(text.charCodeAt(j++)) ? 1 : 0;
      const len = j - i;
      // Words; numbers in groups of three; letters and digits mixed (hashes, ids) come out at about 2.5 characters a token.
      tokens +=
        letters === len
          ? len <= 7
            ? 1
            : 1 + Math.ceil((len - 7) / 4)
          : letters === 0
            ? Math.ceil(len / 3)
            : Math.ceil(len / 2.5);
      i = j;
    } else if (c === 32) {
      // A single space joins the word after it (not a number).
      let j = i + 1;
      while (j < n && text.charCodeAt(j) === 32) j++;
      if (j - i > 1) tokens += Math.ceil((j - i - 1) / 8);
      if (j < n && isDigit(text.charCodeAt(j))) tokens += 1;
      i = j;
    } else if (c === 10 || c === 13 || c === 9) {
      let j = i + 1;
      while (j < n && isSpace(text.charCodeAt(j))) j++;
      tokens += 1 + Math.floor((j - i) / 16);
      i = j;
    } else if (c < 128) {
      let j = i + 1;
      while (j < n && isPunctuation(text.charCodeAt(j))) j++;
      // The last mark before a word joins it (".foo", "(bar").
      const len = j < n && isLetter(text.charCodeAt(j)) ? j - i - 1 : j - i;
      tokens += len === 0 ? 0 : len <= 3 ? 1 : Math.ceil(len / 2);
      i = j;
    } else {
      // CJK about 0.7 of a token a character, a surrogate pair (emoji) about 2, others (accents) half.
      tokens += c >= 0x2e80 && c < 0xd800 ? 0.7 : c >= 0xd800 && c < 0xe000 ? 1 : 0.5;
      i++;
    }
  }
  return Math.ceil(tokens);
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isLetter = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (c >= 0xc0 && c < 0x250);
const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;
const isPunctuation = (c: number) => c < 128 && !isDigit(c) && !isLetter(c) && !isSpace(c);

/** What a message adds to a request besides its text (role, block framing, ids). */
const MESSAGE_OVERHEAD = 4;
const BLOCK_OVERHEAD = 3;

const PER_MESSAGE = new WeakMap<NewMessage, number>();

/** A message's estimated tokens, worked out once per message (messages never change). */
export function estimateMessageTokens(message: NewMessage): number {
  let tokens = PER_MESSAGE.get(message);
  if (tokens !== undefined) return tokens;
  tokens = MESSAGE_OVERHEAD;
  for (const block of message.content) {
    tokens += BLOCK_OVERHEAD;
    switch (block.type) {
      case "text":
        tokens += estimateTextTokens(block.text);
        break;
      case "tool_call":
        tokens +=
          estimateTextTokens(block.id) +
          estimateTextTokens(block.name) +
          estimateTextTokens(block.raw_arguments ?? JSON.stringify(block.input));
        break;
      case "tool_result":
        tokens += estimateTextTokens(block.tool_call_id) + estimateTextTokens(block.content);
        // A tool's image goes as an image to Anthropic only (OpenAI is told it in a line of words): its rule counts.
        for (const image of block.images ?? []) tokens += BLOCK_OVERHEAD + anthropicImageTokens(image);
        break;
      case "image":
      case "document":
        tokens += estimateAttachmentTokens(block);
        break;
    }
  }
  PER_MESSAGE.set(message, tokens);
  return tokens;
}

/** The part of a request that is not history: the system prompt and the tools' definitions. */
export function estimateFixedTokens({ system, tools }: { system: string | null; tools: readonly ToolSpec[] }): number {
  let tokens = system ? estimateTextTokens(system) + MESSAGE_OVERHEAD : 0;
  for (const tool of tools)
    tokens +=
      estimateTextTokens(tool.name) +
      estimateTextTokens(tool.description) +
      estimateTextTokens(JSON.stringify(tool.inputSchema)) +
      BLOCK_OVERHEAD;
  return tokens;
}

/**
 * The factor that turns an estimate into the provider's count, learnt from
 * a call: what it reported for its input over what was estimated for it.
 * Rounded to a twentieth and kept within [0.5, 3], so that a small drift in
 * the reports does not move where trimming cuts (which would change the
 * request's prefix and lose the prompt cache).
 */
export function calibrateTokens({ reported, estimated }: { reported: number; estimated: number }): number {
  if (!(reported > 0) || !(estimated > 0)) return 1;
  const ratio = Math.round((reported / estimated) * 20) / 20;
  return Math.min(3, Math.max(0.5, ratio));
}
