/**
 * Standard base64 (RFC 4648 §4), padded: what both providers take. A flat
 * character class, not a repeated group: a regex that backtracks through a
 * group overflows the stack on a string of megabytes.
 */
const BASE64_CHARS = /^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]=|==)?$/;

/** Whether `text` is strict base64: its alphabet, whole quanta of four, padding only at the end. */
export const isBase64 = (text: string): boolean => text.length % 4 === 0 && BASE64_CHARS.test(text);

/**
 * The bytes of a base64 string, or null when it is not strict base64:
 * `Buffer.from(s, "base64")` skips any character it does not know and
 * accepts missing padding, so it would take text that is not base64 at all.
 */
export function decodeBase64(text: string): Buffer | null {
  return isBase64(text) ? Buffer.from(text, "base64") : null;
}
