import { z } from "zod";
import { SERVER_NAME } from "./mcp-tool-name.js";

/** An entry of `TOOLS_FILE`'s `mcp`: one server, started (`command`) or called (`url`). */
export const mcpServerEntry = z
  .strictObject({
    name: z
      .string()
      .regex(
        SERVER_NAME,
        "must be 1–32 of a-z, A-Z, 0-9, - and single _ between them (`__` ends a server's name in its tools' names)",
      ),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().min(1).optional(),
    url: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).optional(),
    headers: z.record(z.string(), z.string()).default({}),
    approval: z.enum(["destructive", "always", "never"]).default("destructive"),
    tools: z.array(z.string().min(1)).optional(),
    timeout_ms: z.number().int().positive().max(3_600_000).optional(),
  })
  .refine((s) => (s.command === undefined) !== (s.url === undefined), {
    message: "needs either command (stdio) or url (Streamable HTTP), not both",
    path: ["command"],
  });

export type McpServerEntry = z.output<typeof mcpServerEntry>;
