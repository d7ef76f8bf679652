/** A header bag as both SDKs expose a response's (`Headers`), or absent when no response came back. */
interface HeaderBag {
  get(name: string): string | null;
}

/**
 * How long the provider asked to wait, in ms: `retry-after-ms` (OpenAI's,
 * and what the SDKs honour first), else `Retry-After` in seconds or as an
 * HTTP date. Null when neither is there or readable.
 */
export function retryAfterMsOf(headers: HeaderBag | null | undefined, now: () => number = Date.now): number | null {
  if (!headers || typeof headers.get !== "function") return null;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = headers.get("retry-after");
  if (after === null || after.trim() === "") return null;
  if (Number.isFinite(Number(after))) return Math.max(0, Number(after) * 1000);
  const at = Date.parse(after);
  return Number.isNaN(at) ? null : Math.max(0, at - now());
}
