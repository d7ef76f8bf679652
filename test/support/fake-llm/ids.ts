import { randomInt } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function randomChars(length: number, alphabet = BASE62): string {
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

// Lengths copied from recorded responses, so id-format assumptions in loopd
// (column widths, regexes) meet the real thing.
export const newToolUseId = () => `toolu_01${randomChars(22)}`;
export const newAnthropicMessageId = () => `msg_01${randomChars(22)}`;
export const newAnthropicRequestId = () => `req_011C${randomChars(20)}`;
export const newToolCallId = () => `call_${randomChars(24)}`;
export const newChatCompletionId = () => `chatcmpl-${randomChars(29)}`;
export const newOpenAiRequestId = () => `req_${randomChars(32, "0123456789abcdef")}`;
export const newSystemFingerprint = () => `fp_${randomChars(10, "0123456789abcdef")}`;
/** OpenAI pads stream chunks with a random `obfuscation` string of varying length. */
export const newObfuscation = () => randomChars(randomInt(16));
