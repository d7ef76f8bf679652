/** Tool results longer than this are clipped before the model sees them. */
export const MAX_TOOL_RESULT_CHARS = 16_384;

/**
 * Keeps the head and the tail of a long result, with a marker in between
 * saying how many characters were left out, so the whole is at most
 * `maxChars`. The head and the tail both matter: a log's first lines say what
 * ran, its last ones how it ended.
 */
export function clipToolResult(text: string, { maxChars = MAX_TOOL_RESULT_CHARS }: { maxChars?: number } = {}): string {
  if (text.length <= maxChars) return text;
  // The count in the marker has at most as many digits as text.length, so
  // sizing the budget with that marker keeps the result within maxChars.
  const budget = Math.max(0, maxChars - marker(text.length).length);
  let head = text.slice(0, Math.ceil(budget / 2));
  let tail = text.slice(text.length - Math.floor(budget / 2));
  // Never cut a surrogate pair in half: a lone surrogate is not valid UTF-8.
  if (isHighSurrogate(head.charCodeAt(head.length - 1))) head = head.slice(0, -1);
  if (isLowSurrogate(tail.charCodeAt(0))) tail = tail.slice(1);
  return head + marker(text.length - head.length - tail.length) + tail;
}

function marker(leftOut: number): string {
  return `\n\n[… ${leftOut} characters left out …]\n\n`;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
