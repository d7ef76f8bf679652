import { createHash } from "node:crypto";

const MAX_NAME = 64;
const HASH_CHARS = 8;

/**
 * The name both providers accept for an MCP server's tool:
 * `<server>__<tool>`, characters outside `[a-zA-Z0-9_-]` as `_`; past 64
 * characters, or when another of the server's tools came out the same, cut
 * and ended with a short hash of the original name (the caller keeps the
 * mapping back to it).
 */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const plain = `${server}__${tool.replace(/[^a-zA-Z0-9_-]/g, "_")}`;
  if (plain.length <= MAX_NAME && !taken.has(plain)) return plain;
  const hash = createHash("sha256").update(tool).digest("hex").slice(0, HASH_CHARS);
  return `${plain.slice(0, MAX_NAME - HASH_CHARS - 1)}_${hash}`;
}

/** `fs__*`: every tool of the server `fs`, present and future. */
export const SERVER_WILDCARD = /^([a-zA-Z0-9_-]{1,32})__\*$/;

/** The server a tool name's prefix names (`fs` of `fs__read_file`), if it has one. */
export const serverPrefixOf = (name: string): string | null => {
  const at = name.indexOf("__");
  return at > 0 ? name.slice(0, at) : null;
};
