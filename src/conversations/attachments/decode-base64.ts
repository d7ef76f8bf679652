/** Standard base64 (RFC 4648 §4), padded: what both providers take. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The bytes of a base64 string, or null when it is not strict base64:
 * `Buffer.from(s, "base64")` skips any character it does not know and
 * accepts missing padding, so it would take text that is not base64 at all.
 */
export function decodeBase64(text: string): Buffer | null {
  if (!BASE64.test(text)) return null;
  return Buffer.from(text, "base64");
}
