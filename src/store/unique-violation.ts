import { findInCauseChain } from "../errors.js";

/**
 * The constraint a unique violation (SQLSTATE 23505) broke, or null for any
 * other error. Looks through drizzle's wrapper to the driver's error; pg and
 * PGlite both report `code` and `constraint`.
 */
export function uniqueViolation(err: unknown): string | null {
  return (
    findInCauseChain(err, (e) => {
      const { code, constraint } = e as { code?: unknown; constraint?: unknown };
      return code === "23505" ? (typeof constraint === "string" ? constraint : "") : undefined;
    }) ?? null
  );
}

/** A deadlock or serialization failure (40P01, 40001): the transaction may simply be tried again. */
export const isLockConflict = (err: unknown): boolean =>
  findInCauseChain(err, (e) => {
    const code = (e as { code?: unknown }).code;
    return code === "40P01" || code === "40001" ? true : undefined;
  }) ?? false;
