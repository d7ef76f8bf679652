import { readFileSync } from "node:fs";
import { Webhook } from "standardwebhooks";
import { z } from "zod";
import { isCheckableSchema, isObjectSchema } from "../json-schema/json-schema.js";
import { SECRET_NAME } from "../util/redact.js";
import { TOOL_NAME } from "./define-tool.js";
import { SERVER_NAME, serverPrefixOf } from "./mcp/mcp-tool-name.js";
import { fieldPath } from "../util/field-path.js";

/** A `${VAR}` in a string of the file: read from the environment. */
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const inputSchema = z
  .record(z.string(), z.unknown())
  .refine(isObjectSchema, 'must be a JSON Schema of an object: {"type": "object", "properties": {…}}')
  .refine(isCheckableSchema, "must be a JSON Schema loopd can check (no unresolved $ref; patterns RE2 can run)");

/** A Standard Webhooks signing secret (`whsec_` and base64), as the `standardwebhooks` package takes it. */
export const webhookSecret = z.string().refine((s) => {
  try {
    new Webhook(s);
    return true;
  } catch {
    return false;
  }
}, "must be a Standard Webhooks secret: whsec_ and base64");

const httpTool = z.strictObject({
  name: z.string().regex(TOOL_NAME, `must match ${TOOL_NAME.source} (what both providers accept)`),
  description: z.string().max(10_000).default(""),
  input_schema: inputSchema,
  url: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }),
  headers: z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "must be a header name"), z.string()).default({}),
  secret: webhookSecret.optional(),
  timeout_ms: z.number().int().positive().max(3_600_000).optional(),
  read_only: z.boolean().default(false),
  /** @default "never" for a read-only tool, else "always" */
  approval: z.enum(["never", "always"]).optional(),
});

const mcpServer = z
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

const toolsFileSchema = z.strictObject({ http: z.array(httpTool).default([]), mcp: z.array(mcpServer).default([]) });

export type HttpToolEntry = z.output<typeof httpTool>;
export type McpServerEntry = z.output<typeof mcpServer>;
export type ToolsFile = z.output<typeof toolsFileSchema>;

export class ToolsFileError extends Error {
  override readonly name = "ToolsFileError";
}

/**
 * Reads and checks `TOOLS_FILE`: every problem is one line naming the file,
 * the entry and the field (`TOOLS_FILE tools.json: http[0].url: …`). `${VAR}`
 * in any string is read from `env`; one that is not set is an error naming
 * it. Names must be unique among the file's tools and `taken` (the built-ins).
 */
export function loadToolsFile(
  file: string,
  { env, taken }: { env: Record<string, unknown>; taken: readonly string[] },
): ToolsFile {
  const fail = (where: string, message: string): never => {
    throw new ToolsFileError(`TOOLS_FILE ${file}: ${where ? `${where}: ` : ""}${message}`);
  };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    return fail("", `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return fail("", `is not JSON: ${(err as Error).message}`);
  }
  const parsed = toolsFileSchema.safeParse(substitute(raw, env, fail));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
    fail(fieldPath(field), issue.code === "unrecognized_keys" ? "is not a field loopd knows" : issue.message);
  }
  const tools = parsed.data!;
  const owners = new Map<string, string>(taken.map((name) => [name, "a built-in tool"]));
  tools.http.forEach((tool, i) => {
    const owner = owners.get(tool.name);
    if (owner)
      fail(`http[${i}].name`, `${tool.name} is also ${owner}'s name: tool names are unique across every source`);
    owners.set(tool.name, `http[${i}]`);
  });
  const servers = new Map<string, number>();
  tools.mcp.forEach((server, i) => {
    if (servers.has(server.name))
      fail(`mcp[${i}].name`, `${server.name} is also mcp[${servers.get(server.name)}]'s name`);
    servers.set(server.name, i);
  });
  // A server's tools are named `<server>__<tool>`: no other tool may take a name of that form.
  tools.http.forEach((tool, i) => {
    const server = serverPrefixOf(tool.name);
    if (server !== null && servers.has(server))
      fail(
        `http[${i}].name`,
        `${tool.name} is a name of mcp[${servers.get(server)}]'s tools (${server}__…): tool names are unique across every source`,
      );
  });
  return tools;
}

/**
 * The file's header values and secrets (with what `${VAR}` put into them),
 * and its MCP servers' environment values named like secrets: they never
 * appear in a log or a trace.
 */
export function secretsOfToolsFile(tools: ToolsFile): string[] {
  return [
    ...tools.http.flatMap((t) => [...Object.values(t.headers), ...(t.secret ? [t.secret] : [])]),
    ...tools.mcp.flatMap((s) => [
      ...Object.values(s.headers),
      ...Object.entries(s.env).flatMap(([name, value]) => (SECRET_NAME.test(name) ? [value] : [])),
    ]),
  ];
}

function substitute(
  value: unknown,
  env: Record<string, unknown>,
  fail: (where: string, message: string) => never,
  path: (string | number)[] = [],
): unknown {
  if (typeof value === "string") {
    return value.replace(VARIABLE, (_, name: string) => {
      const found = env[name];
      return typeof found === "string" && found !== ""
        ? found
        : fail(fieldPath(path), `\${${name}} is not set in the environment`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, env, fail, [...path, i]));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, env, fail, [...path, k])]));
  return value;
}
