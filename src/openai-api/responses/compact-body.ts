import { z } from "zod";
import { isPgSafe } from "../../store/pg-safe.js";
import { compactionItemSchema } from "./compaction-item.js";

/** `POST /v1/responses/compact`'s body: the spec's `CompactResponseMethodPublicBody`. */

const str = () => z.string().refine(isPgSafe, "must not contain NUL characters or unpaired surrogates");
/** A content part: text of any kind is read; images and files are named in the transcript, not shown. */
const part = z.looseObject({
  type: z.enum(["input_text", "output_text", "refusal", "input_image", "input_file"]),
  text: str().optional(),
  refusal: str().optional(),
  filename: str().nullish(),
});
const content = z.union([str(), z.array(part)]);

export const compactInputItem = z.union([
  compactionItemSchema,
  z.looseObject({
    type: z.literal("message").optional(),
    role: z.enum(["user", "system", "developer", "assistant"]),
    content,
  }),
  z.looseObject({ type: z.literal("function_call"), call_id: str(), name: str(), arguments: str() }),
  z.looseObject({ type: z.literal("function_call_output"), call_id: str(), output: content }),
  z.looseObject({
    type: z.literal("mcp_call"),
    name: str(),
    arguments: str(),
    output: str().nullish(),
    error: str().nullish(),
  }),
]);

export const compactBody = z.strictObject({
  model: z
    .string()
    .min(1)
    .describe("`agent:<name>[@<version>]`, `<provider>/<model>`, or a model of the default provider"),
  // null is the spec's "none", as is leaving it out (a nullable union is not an OpenAPI 3.0 schema).
  input: z.preprocess((v) => v ?? undefined, z.union([str(), z.array(compactInputItem).max(10_000)]).optional()),
  previous_response_id: str().max(100).nullish(),
  instructions: str().nullish(),
  prompt_cache_key: str().max(64).nullish(),
});

export type CompactBody = z.infer<typeof compactBody>;
export type CompactInputItem = z.infer<typeof compactInputItem>;
