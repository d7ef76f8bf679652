const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * How deep a JSON value nests: a scalar is 0, `{}` and `[]` are 1, `{"a":[]}`
 * is 2. Walks with a stack of its own, never recursion, so no value can
 * overflow the call stack; stops counting once past `stopAbove`.
 */
export function jsonDepth(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const [node, depth] = item;
    if (node === null || typeof node !== "object") continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > stopAbove) return deepest;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * Reads JSON text, before it is parsed, for nesting deeper than `maxDepth`.
 * Returns null when it is within the bound, else the top-level field where it
 * went too deep (`body.metadata`), or `body` when that cannot be told. Text
 * that is not JSON passes: the parser that follows reports it.
 */
export function fieldNestedDeeperThan(text: string, maxDepth: number): string | null {
  let depth = 0;
  let topIsObject = false;
  let lastTopString: [number, number] | null = null;
  let topKey: [number, number] | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
      // Inside the top object, the string read last before a nested value opens is that value's key.
      if (depth === 1) lastTopString = [start, i + 1];
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
      if (depth === 1) topIsObject = c === OPEN_BRACE;
      if (depth === 2) topKey = topIsObject ? lastTopString : null;
      if (depth > maxDepth) return topKey ? `body.${keyAt(text, topKey)}` : "body";
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return null;
}

function keyAt(text: string, [start, end]: [number, number]): string {
  try {
    return String(JSON.parse(text.slice(start, end)));
  } catch {
    return "?";
  }
}
