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
  if (value && typeof value === "object") return Object.entries(value).every(([k, v]) => isPgSafe(k) && isPgSafe(v));
  return true;
}

export function toPgSafe<T>(value: T): T {
  if (typeof value === "string") return value.replace(UNSAFE_ALL, "\ufffd") as T;
  if (Array.isArray(value)) return value.map(toPgSafe) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [toPgSafe(k), toPgSafe(v)])) as T;
  }
  return value;
}
