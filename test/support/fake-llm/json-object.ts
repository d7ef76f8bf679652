export type JsonObject = Record<string, unknown>;

/** A parsed JSON object (not an array, not null). */
export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);
