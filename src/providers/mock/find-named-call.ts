import { isPlainObject } from "../shared/parse-tool-arguments.js";

/**
 * A call the user spelt out: the name of one of the offered tools followed by
 * its input as a JSON object (`create_invoice {"customer": "ACME"}`). Lets
 * the mock call any tool, a client's own included. Linear in the text: one
 * `indexOf` per tool name and one JSON parse.
 */
export function findNamedCall(
  text: string,
  toolNames: readonly string[],
): { name: string; input: Record<string, unknown> } | null {
  for (const name of toolNames) {
    const at = text.indexOf(name);
    if (at < 0) continue;
    const open = text.indexOf("{", at + name.length);
    const close = text.lastIndexOf("}");
    if (open < 0 || close < open || text.slice(at + name.length, open).trim() !== "") continue;
    try {
      const input: unknown = JSON.parse(text.slice(open, close + 1));
      if (isPlainObject(input)) return { name, input };
    } catch {
      // Not JSON: not a spelt-out call.
    }
  }
  return null;
}
