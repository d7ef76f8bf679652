import { createHash } from "node:crypto";
import { AppError } from "../errors.js";

/** A request body's fingerprint, for Idempotency-Key: key order does not change it. */
export function hashOfRequest(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, x]) => [k, canonical(x)]),
          )
        : v;
  return createHash("sha256")
    .update(JSON.stringify(canonical(value)))
    .digest("hex");
}

/** A retry with a key seen before must carry the same request. */
export function checkSameRequest(earlierHash: string | null, hash: string, details: Record<string, unknown>): void {
  if (earlierHash !== hash) {
    throw new AppError(
      "idempotency_key_reused",
      "this Idempotency-Key was used with a different request body",
      details,
    );
  }
}
