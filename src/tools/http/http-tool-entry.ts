import { z } from "zod";
import { isCheckableSchema, isObjectSchema } from "../../json-schema/json-schema.js";
import { webhookSecret } from "../../util/webhook-secret.js";
import { TOOL_NAME } from "../define-tool.js";

const inputSchema = z
  .record(z.string(), z.unknown())
  .refine(isObjectSchema, 'must be a JSON Schema of an object: {"type": "object", "properties": {…}}')
  .refine(isCheckableSchema, "must be a JSON Schema loopd can check (no unresolved $ref; patterns RE2 can run)");

/** An entry of `TOOLS_FILE`'s `http`: one endpoint, one tool. */
export const httpToolEntry = z.strictObject({
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

export type HttpToolEntry = z.output<typeof httpToolEntry>;
