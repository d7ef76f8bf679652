import { AppError } from "../errors.js";

/** An opaque page cursor: the (created_at, id) of the last row shown. */
export function encodeCursor({ createdAt, id }: { createdAt: Date; id: string }): string {
  return Buffer.from(`${createdAt.toISOString()}|${id}`).toString("base64url");
}

export function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [iso, id] = Buffer.from(cursor, "base64url").toString().split("|");
  const createdAt = new Date(iso ?? "");
  if (!id || Number.isNaN(createdAt.getTime())) {
    throw new AppError("invalid_request", "cursor is not one this server returned", { field: "cursor" });
  }
  return { createdAt, id };
}
