import { z } from "zod";
import type { Tool as ListedTool } from "@modelcontextprotocol/sdk/types.js";
import { isObjectSchema } from "../../json-schema/json-schema.js";
import { checkToolInput } from "../check-tool-input.js";
import type { ApprovalMode, Tool } from "../define-tool.js";
import { mcpResult, type McpCallResult } from "./mcp-result.js";
import type { McpServerEntry } from "./mcp-server-entry.js";
import { mcpToolName } from "./mcp-tool-name.js";

export type { ListedTool };

/** A tool of an MCP server, under the name the model sees. */
export type McpTool = Tool<Record<string, unknown>> & { server: string; original: string };

/** Longest description and input schema (as JSON) kept of a listed tool: a server does not fill the model's context. */
const MAX_DESCRIPTION = 10_000;
const MAX_SCHEMA_CHARS = 64 * 1024;
/** What one server's tools may hold in all (descriptions and schemas): past it, the rest of its list is left out. */
const MAX_LIST_CHARS = 1024 * 1024;

/**
 * The tools a server listed, as loopd's: named `<server>__<tool>` (see
 * `mcpToolName`), limited to the entry's `tools`, read-only when they say
 * `readOnlyHint: true`, needing approval per the entry's `approval` and
 * their annotations. A tool whose input schema is not an object, or is too
 * big, is left out, as are tools past 1 MB of descriptions and schemas in
 * all. Nothing here compiles a schema: listing costs no more than reading.
 * Calls go through `call` with the original name; input is checked against
 * the schema first, in the schema worker, when loopd can compile it (else
 * the server checks it).
 */
export function mcpToolsOf(
  entry: McpServerEntry,
  listed: readonly ListedTool[],
  {
    call,
    available,
    timeoutMs,
  }: {
    call: (tool: string, input: Record<string, unknown>, signal: AbortSignal) => Promise<McpCallResult>;
    available: () => boolean;
    timeoutMs: number;
  },
): McpTool[] {
  const wanted = entry.tools === undefined ? null : new Set(entry.tools);
  const taken = new Set<string>();
  let bytes = 0;
  const tools: McpTool[] = [];
  for (const t of listed) {
    if (wanted && !wanted.has(t.name)) continue;
    const { $schema: _ignored, ...inputSchema } = t.inputSchema as Record<string, unknown>;
    const schemaChars = JSON.stringify(inputSchema).length;
    if (!isObjectSchema(inputSchema) || schemaChars > MAX_SCHEMA_CHARS) continue;
    const description = (t.description ?? "").slice(0, MAX_DESCRIPTION);
    bytes += schemaChars + description.length;
    if (bytes > MAX_LIST_CHARS) break;
    const name = mcpToolName(entry.name, t.name);
    // Two originals with one name (a hash collision, or a server listing a tool twice): neither can be told apart, both are left out.
    if (taken.has(name)) {
      const at = tools.findIndex((other) => other.name === name);
      if (at >= 0) tools.splice(at, 1);
      continue;
    }
    taken.add(name);
    const readOnly = t.annotations?.readOnlyHint === true;
    const approval: ApprovalMode =
      entry.approval === "destructive"
        ? readOnly || t.annotations?.destructiveHint === false
          ? "never"
          : "always"
        : entry.approval;
    tools.push({
      name,
      original: t.name,
      server: entry.name,
      description,
      input: z.record(z.string(), z.unknown()),
      inputSchema,
      readOnly,
      approval,
      needsApproval: () => approval === "always",
      source: "mcp",
      available,
      timeoutMs,
      async execute(input, ctx) {
        // In the worker: compiling a server's schema may take long, and loopd cannot compile every schema (then the server checks).
        await checkToolInput(name, inputSchema, input, { signal: ctx.signal, uncompilable: "skip" });
        return mcpResult(await call(t.name, input, ctx.signal), ctx.keepImages);
      },
    });
  }
  return tools;
}
