import { z } from "zod";
import type { Tool as ListedTool } from "@modelcontextprotocol/sdk/types.js";
import { isCheckableSchema, isObjectSchema } from "../../json-schema.js";
import { checkToolInput } from "../check-tool-input.js";
import type { ApprovalMode, Tool } from "../define-tool.js";
import type { McpServerEntry } from "../tools-file.js";
import { mcpToolName } from "./mcp-tool-name.js";

export type { ListedTool };

/** A tool of an MCP server, under the name the model sees. */
export type McpTool = Tool<Record<string, unknown>> & { server: string; original: string };

/** Longest description and input schema (as JSON) kept of a listed tool: a server does not fill the model's context. */
const MAX_DESCRIPTION = 10_000;
const MAX_SCHEMA_CHARS = 64 * 1024;

/**
 * The tools a server listed, as loopd's: named `<server>__<tool>` (see
 * `mcpToolName`), limited to the entry's `tools`, read-only when they say
 * `readOnlyHint: true`, needing approval per the entry's `approval` and
 * their annotations. A tool whose input schema is not an object, or is too
 * big, is left out. Calls go through `call` with the original name; input
 * is checked against the schema first when loopd can check it safely (else
 * the server checks it).
 */
export function mcpToolsOf(
  entry: McpServerEntry,
  listed: readonly ListedTool[],
  { call, available, timeoutMs }: { call: (tool: string, input: Record<string, unknown>, signal: AbortSignal) => Promise<string>; available: () => boolean; timeoutMs: number },
): McpTool[] {
  const wanted = entry.tools === undefined ? null : new Set(entry.tools);
  const taken = new Set<string>();
  const tools: McpTool[] = [];
  for (const t of listed) {
    if (wanted && !wanted.has(t.name)) continue;
    const { $schema: _ignored, ...inputSchema } = t.inputSchema as Record<string, unknown>;
    if (!isObjectSchema(inputSchema) || JSON.stringify(inputSchema).length > MAX_SCHEMA_CHARS) continue;
    const name = mcpToolName(entry.name, t.name, taken);
    if (taken.has(name)) continue;
    taken.add(name);
    const readOnly = t.annotations?.readOnlyHint === true;
    const approval: ApprovalMode = entry.approval === "destructive" ? (readOnly || t.annotations?.destructiveHint === false ? "never" : "always") : entry.approval;
    const checkable = isCheckableSchema(inputSchema);
    tools.push({
      name,
      original: t.name,
      server: entry.name,
      description: (t.description ?? "").slice(0, MAX_DESCRIPTION),
      input: z.record(z.string(), z.unknown()),
      inputSchema,
      readOnly,
      approval,
      needsApproval: () => approval === "always",
      source: "mcp",
      available,
      timeoutMs,
      async execute(input, ctx) {
        if (checkable) await checkToolInput(name, inputSchema, input, ctx.signal);
        return call(t.name, input, ctx.signal);
      },
    });
  }
  return tools;
}
