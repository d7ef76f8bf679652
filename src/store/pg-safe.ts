/**
 * Postgres text and jsonb refuse NUL characters and lone UTF-16 surrogates.
 * Input with them is refused at the edge (`isPgSafe`); what models and tools
 * produce is mended before it is saved (`toPgSafe`), so a stray byte in a
 * tool's output never fails a run.
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what we look for
const UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, "g");

export function isPgSafe(value: unknown): boolean {
  if (typeof value === "string") return !UNSAFE.test(value);
  if (Array.isArray(value)) return value.every(isPgSafe);
  if (value && typeof value === "object") {
    for (const key in value)
      if (Object.hasOwn(value, key) && (UNSAFE.test(key) || !isPgSafe((value as Record<string, unknown>)[key])))
        return false;
  }
  return true;
}

/** The value itself when it is safe (the common case: nothing is copied); else a copy mended. */
export function toPgSafe<T>(value: T): T {
  return isPgSafe(value) ? value : mend(value);
}

function mend<T>(value: T): T {
  if (typeof value === "string") return value.replace(UNSAFE_ALL, "\ufffd") as T;
  if (Array.isArray(value)) return value.map(mend) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [mend(k), mend(v)])) as T;
  }
  return value;
}

/**
 * `JSON.stringify(toPgSafe(value))`, in one pass over the text when the
 * value is safe: JSON.stringify writes a NUL or a lone surrogate as a
 * `\u` escape (`\u0000`, `\udXXX`), and nothing else as one, so a text
 * without such an escape came from a safe value. (A backslash the value holds,
 * followed by such letters, is rare and only costs the walk.)
 */
export function pgSafeJson(value: unknown): string {
  const json = JSON.stringify(value);
  return ESCAPED_UNSAFE.test(json) ? JSON.stringify(mend(value)) : json;
}

const ESCAPED_UNSAFE = /\\u(?:0000|d[89a-f])/;
