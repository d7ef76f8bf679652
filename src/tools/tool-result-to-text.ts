/** What the model reads when a tool returns nothing. */
export const NO_OUTPUT = "(no output)";

/**
 * A tool's return value as the text of its result: a string as is, anything
 * else as compact JSON. `undefined` (and values JSON cannot express, such as a
 * function) become {@link NO_OUTPUT} rather than "": an empty result tells the
 * model nothing, and some providers reject empty tool content.
 *
 * Throws when the value cannot be serialized (a cycle, a BigInt); the executor
 * turns that into an error result.
 */
export function toolResultToText(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? NO_OUTPUT;
}
