/** The system error code under a fetch failure (`ECONNREFUSED`, `ECONNRESET`, `UND_ERR_SOCKET` …). */
export function causeCode(err: unknown): string | undefined {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === "string") return e.code;
  }
  return undefined;
}
