import { AppError } from "../errors.js";
import { isPgSafe } from "../store/pg-safe.js";

/** An opaque page cursor: the (created_at, id) of the last row shown. */
export function encodeCursor({ createdAt, id }: { createdAt: Date; id: string }): string {
  return Buffer.from(`${createdAt.toISOString()}|${id}`).toString("base64url");
}

export function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [iso, id] = Buffer.from(cursor, "base64url").toString().split("|");
  const createdAt = new Date(iso ?? "");
  const time = createdAt.getTime();
  // Within what Postgres timestamps hold; anything else was not made here.
  if (!id || !isPgSafe(id) || !(time >= 0 && time < Date.UTC(10_000, 0, 1))) {
    throw new AppError("invalid_request", "cursor is not one this server returned", { field: "cursor" });
  }
  return { createdAt, id };
}
