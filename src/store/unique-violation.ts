/**
 * The constraint a unique violation (SQLSTATE 23505) broke, or null for any
 * other error. Looks through drizzle's wrapper to the driver's error; pg and
 * PGlite both report `code` and `constraint`.
 */
export function uniqueViolation(err: unknown): string | null {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, constraint } = e as { code?: unknown; constraint?: unknown };
    if (code === "23505") return typeof constraint === "string" ? constraint : "";
  }
  return null;
}
