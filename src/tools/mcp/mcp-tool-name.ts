import { createHash } from "node:crypto";

const MAX_NAME = 64;
const HASH_CHARS = 8;

/**
 * The name both providers accept for an MCP server's tool:
 * `<server>__<tool>` when the tool's name is already made of
 * `[a-zA-Z0-9_-]` and fits in 64 characters; otherwise its characters
 * outside that set as `_`, cut to fit, and ended with a short hash of the
 * original name. A name depends on the tool's own name only, never on the
 * order of the server's list, so it means the same tool from one listing
 * to the next (`a.b` and `a_b` never trade names). The caller keeps the
 * mapping back to the original.
 */
export function mcpToolName(server: string, tool: string): string {
  const plain = `${server}__${tool}`;
  if (plain.length <= MAX_NAME && /^[a-zA-Z0-9_-]+$/.test(tool)) return plain;
  const hash = createHash("sha256").update(tool).digest("hex").slice(0, HASH_CHARS);
  return `${`${server}__${tool.replace(/[^a-zA-Z0-9_-]/g, "_")}`.slice(0, MAX_NAME - HASH_CHARS - 1)}_${hash}`;
}

/**
 * An MCP server's name in `TOOLS_FILE`: letters, digits, `-` and single
 * `_` between them, so `<server>__` tells where the server's name ends
 * (no server `a__b` whose tools could pass for server `a`'s).
 */
export const SERVER_NAME = /^(?=.{1,32}$)[a-zA-Z0-9-]+(?:_[a-zA-Z0-9-]+)*$/;

/** `fs__*`: every tool of the server `fs`, present and future. */
export const SERVER_WILDCARD = /^([a-zA-Z0-9_-]{1,32})__\*$/;

/** Whether `tools` (a conversation's) covers `name`: named, or under a `<server>__*` it holds. */
export const coveredBy = (tools: readonly string[], name: string): boolean =>
  tools.includes(name) || tools.some((t) => SERVER_WILDCARD.test(t) && name.startsWith(t.slice(0, -1)));
