import { z } from "zod";
import { isPgSafe } from "../../store/pg-safe.js";
import { compactionItemSchema } from "./compaction-item.js";

/** `POST /v1/responses`' body: the open Open Responses specification's `CreateResponseBody`, with OpenAI's `conversation`. */

/** Every string is one Postgres can store and look up: a NUL is a 400 naming its field, not a failed query. */
const str = () => z.string().refine(isPgSafe, "must not contain NUL characters or unpaired surrogates");
const text = str();
const part = z.discriminatedUnion("type", [
  z.object({ type: z.enum(["input_text", "output_text"]), text }),
  z.object({
    type: z.literal("input_image"),
    image_url: str().nullish(),
    file_id: str().nullish(),
    detail: z.enum(["low", "high", "auto"]).nullish(),
  }),
  z.object({
    type: z.literal("input_file"),
    filename: str().nullish(),
    file_data: str().nullish(),
    file_url: str().nullish(),
    file_id: str().nullish(),
  }),
]);

const messageItem = z.object({
  type: z.literal("message").optional(),
  id: str().nullish(),
  role: z.enum(["user", "system", "developer", "assistant"]),
  content: z.union([str(), z.array(part)]),
  status: str().nullish(),
});

const inputItem = z.union([
  messageItem,
  z.object({
    type: z.literal("function_call_output"),
    id: str().nullish(),
    call_id: str().min(1).max(64),
    output: z.union([str(), z.array(part)]),
    status: str().nullish(),
  }),
  z.object({
    type: z.literal("mcp_approval_response"),
    id: str().nullish(),
    approval_request_id: str(),
    approve: z.boolean(),
    reason: str().nullish(),
  }),
  // The server's question, as a response's output showed it: only the echo of one answered alongside is taken.
  z.object({
    type: z.literal("mcp_approval_request"),
    id: str(),
    name: str().nullish(),
    arguments: str().nullish(),
    server_label: str().nullish(),
  }),
  z.object({
    type: z.literal("function_call"),
    id: str().nullish(),
    call_id: str(),
    name: str(),
    arguments: str(),
    status: str().nullish(),
  }),
  z.object({ type: z.literal("item_reference"), id: str() }),
  // Sent back with a history the client keeps; left out (another provider's reasoning is not the model's to read).
  z.object({ type: z.literal("reasoning"), id: str().nullish() }),
  // A call of a tool the server ran, as a response's output showed it, sent back with a history the client keeps.
  z.object({
    type: z.literal("mcp_call"),
    id: str(),
    name: str(),
    arguments: str(),
    output: str().nullish(),
    error: str().nullish(),
    server_label: str().nullish(),
    status: str().nullish(),
  }),
  compactionItemSchema,
]);

export const functionToolSchema = z.object({
  type: z.literal("function"),
  name: str().regex(/^[a-zA-Z0-9_-]{1,64}$/, "a function's name: letters, digits, _ and -, at most 64"),
  description: str().nullish(),
  parameters: z.record(str(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

const toolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), name: str() }),
]);

const format = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text") }),
  z.object({ type: z.literal("json_object") }),
  z.object({
    type: z.literal("json_schema"),
    name: str().max(64),
    description: str().nullish(),
    schema: z.record(str(), z.unknown()),
    strict: z.boolean().nullish(),
  }),
]);

const metadata = z.record(str().max(64), str().max(512)).refine((m) => Object.keys(m).length <= 16, "at most 16 keys");

/**
 * The most items one `input` holds: a history a client keeps is appended in
 * one statement, and a statement takes at most 65,535 parameters (six a message).
 */
export const MAX_INPUT_ITEMS = 5000;

export const createResponseBody = z.strictObject({
  model: z
    .string()
    .min(1)
    .describe("`agent:<name>[@<version>]`, `<provider>/<model>`, or a model of the default provider"),
  input: z
    .union([str(), z.array(inputItem)])
    .refine(
      (input) => typeof input === "string" || input.length <= MAX_INPUT_ITEMS,
      `at most ${MAX_INPUT_ITEMS} items: compact a longer history (POST /v1/responses/compact), or continue with previous_response_id`,
    )
    .optional(),
  instructions: str().nullish(),
  previous_response_id: str().max(100).nullish(),
  conversation: z.union([str().max(100), z.object({ id: str().max(100) })]).optional(),
  tools: z.array(functionToolSchema).nullish(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().nullish(),
  max_output_tokens: z.number().int().min(16).nullish(),
  max_tool_calls: z.number().int().min(1).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  presence_penalty: z.number().nullish(),
  frequency_penalty: z.number().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  text: z.object({ format: format.optional(), verbosity: z.enum(["low", "medium", "high"]).nullish() }).nullish(),
  metadata: metadata.nullish(),
  store: z.boolean().optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_obfuscation: z.boolean().optional() }).nullish(),
  background: z.boolean().optional(),
  include: z.array(str()).optional(),
  reasoning: z.record(str(), z.unknown()).nullish(),
  truncation: z.enum(["auto", "disabled"]).optional(),
  service_tier: z.enum(["auto", "default", "flex", "priority"]).optional(),
  safety_identifier: str().max(64).nullish(),
  prompt_cache_key: str().max(64).nullish(),
  user: str().optional(),
});

export type CreateResponseBody = z.infer<typeof createResponseBody>;
export type FunctionToolParam = z.infer<typeof functionToolSchema>;
