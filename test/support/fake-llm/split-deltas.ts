/**
 * Split text the way a model streams it: one word per piece, each piece
 * carrying the whitespace before it. The pieces always join back to `text`.
 */
export function splitWords(text: string): string[] {
  const pieces = text.match(/\s*\S+/g) ?? [];
  const covered = pieces.join("").length;
  if (covered < text.length) {
    const tail = text.slice(covered);
    if (pieces.length === 0) return [tail];
    pieces[pieces.length - 1] += tail;
  }
  return pieces;
}

/**
 * Split a JSON string into token-like pieces (`{"`, `location`, `":"`, …),
 * like recorded tool-argument deltas. Joins back to `json`, valid or not.
 */
export function splitJson(json: string): string[] {
  return json.match(/\s*[A-Za-z0-9_]+|\s*[^A-Za-z0-9_\s]+|\s+/g) ?? [];
}

/** A rough token count: about four characters a token, at least one. */
export function estimateTokens(value: unknown): number {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "");
  return Math.max(1, Math.ceil(text.length / 4));
}
