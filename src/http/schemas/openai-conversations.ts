import { z } from "zod";
import { MAX_ITEMS_PER_REQUEST } from "../../openai-api/conversations/add-items.js";
import { expecting, id, text } from "./shared.js";

/**
 * OpenAI's Conversations API as zod (`/v1/conversations`): its shapes, its
 * limits (metadata: 16 keys of at most 64 characters, values of at most
 * 512; 20 items a request), its error body.
 */

export const MAX_METADATA_KEYS = 16;
export const MAX_METADATA_KEY_CHARS = 64;
export const MAX_METADATA_VALUE_CHARS = 512;

export const openaiMetadata = z
  .record(
    text().max(MAX_METADATA_KEY_CHARS, `a key must be at most ${MAX_METADATA_KEY_CHARS} characters`),
    text().max(MAX_METADATA_VALUE_CHARS, `a value must be at most ${MAX_METADATA_VALUE_CHARS} characters`),
    { error: "must be an object of strings" },
  )
  .refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, `must hold at most ${MAX_METADATA_KEYS} keys`);

const itemFields = {
  id: text().max(200).optional(),
  status: z.enum(["in_progress", "completed", "incomplete"]).optional(),
};

const part = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("input_text"), text: text() }),
  z.strictObject({
    type: z.literal("output_text"),
    text: text(),
    annotations: z.array(z.unknown()).max(0, "annotations are not kept").optional(),
    logprobs: z.array(z.unknown()).optional(),
  }),
  z.strictObject({ type: z.literal("refusal"), refusal: text() }),
  z.strictObject({
    type: z.literal("input_image"),
    image_url: z.string().nullish(),
    file_id: z.string().nullish(),
    detail: z.enum(["auto", "low", "high"]).optional(),
  }),
  z.strictObject({
    type: z.literal("input_file"),
    filename: text().nullish(),
    file_data: z.string().nullish(),
    file_url: z.string().nullish(),
    file_id: z.string().nullish(),
  }),
]);

const messageItem = z.strictObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: z.union(
    [text(), z.array(part).min(1, "must hold at least one part")],
    expecting("a string or an array of parts"),
  ),
  ...itemFields,
});
const functionCallItem = z.strictObject({
  type: z.literal("function_call"),
  call_id: id(),
  name: id(),
  arguments: text().max(100_000),
  ...itemFields,
});
const functionCallOutputItem = z.strictObject({
  type: z.literal("function_call_output"),
  call_id: id(),
  output: z.union([text(), z.array(part)], expecting("a string or an array of parts")),
  ...itemFields,
});

/** What a client may add: messages (user and assistant), `function_call` and `function_call_output`. */
export const inputItem = z.union(
  [functionCallItem, functionCallOutputItem, messageItem],
  expecting('a message ({"role", "content"}), a function_call or a function_call_output'),
);

const items = z
  .array(inputItem)
  .max(MAX_ITEMS_PER_REQUEST, `must hold at most ${MAX_ITEMS_PER_REQUEST} items (add more with another request)`);

/** `include` as OpenAI's list has it; `message.input_image.image_url` shows where a stored image is read. */
const includable = z.enum([
  "message.input_image.image_url",
  "message.output_text.logprobs",
  "computer_call_output.output.image_url",
  "file_search_call.results",
  "web_search_call.action.sources",
  "web_search_call.results",
  "code_interpreter_call.outputs",
  "reasoning.encrypted_content",
]);
const include = z.preprocess((v) => (typeof v === "string" ? [v] : v), z.array(includable).max(10)).optional();

export const createConversationBody = z
  .strictObject({ items: items.nullish(), metadata: openaiMetadata.nullish() })
  .optional();
export const updateConversationBody = z.strictObject({ metadata: openaiMetadata.nullable() });
export const addItemsBody = z.strictObject({ items: items.min(1, "must hold at least one item") });
/** `include`, as the `openai` client sends it (`include[]=…`) or by hand (`include=…`). */
const includeFields = { include, "include[]": include };
export const includeQuery = z.strictObject(includeFields);
export const listItemsQuery = z.strictObject({
  after: text().max(300).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
  ...includeFields,
});
/** The values of `include`, however it was sent. */
export const includeOf = (query: { include?: string[] | undefined; "include[]"?: string[] | undefined }): string[] => [
  ...(query.include ?? []),
  ...(query["include[]"] ?? []),
];

export const conversationParams = z.strictObject({ conversation_id: id() });
export const itemParams = z.strictObject({ conversation_id: id(), item_id: id().max(300) });

export const conversationObjectSchema = z.object({
  id: z.string(),
  object: z.literal("conversation"),
  created_at: z.number().int(),
  metadata: z.record(z.string(), z.unknown()),
});
export const deletedConversationSchema = z.object({
  id: z.string(),
  object: z.literal("conversation.deleted"),
  deleted: z.literal(true),
});
const itemStatus = z.enum(["in_progress", "completed", "incomplete"]);
const shownPart = z.discriminatedUnion("type", [
  z.object({ type: z.literal("input_text"), text: z.string() }),
  z.object({
    type: z.literal("output_text"),
    text: z.string(),
    annotations: z.array(z.never()),
    logprobs: z.array(z.never()),
  }),
  z.object({ type: z.literal("input_image"), image_url: z.string().nullable(), detail: z.literal("auto") }),
  z.object({ type: z.literal("input_file"), filename: z.string().optional(), file_url: z.string().optional() }),
]);

/** An item as loopd shows one (src/openai-api/items/openai-items.ts). */
export const itemSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("message"),
    id: z.string(),
    status: itemStatus,
    role: z.enum(["user", "assistant", "system", "developer"]),
    content: z.array(shownPart),
  }),
  z.object({
    type: z.literal("function_call"),
    id: z.string(),
    call_id: z.string(),
    name: z.string(),
    arguments: z.string(),
    status: itemStatus,
  }),
  z.object({
    type: z.literal("function_call_output"),
    id: z.string(),
    call_id: z.string(),
    output: z.string(),
    status: itemStatus,
  }),
  z.object({
    type: z.literal("mcp_call"),
    id: z.string(),
    server_label: z.literal("loopd"),
    name: z.string(),
    arguments: z.string(),
    output: z.string().nullable(),
    error: z.string().nullable(),
    status: itemStatus,
  }),
  z.object({
    type: z.literal("mcp_approval_request"),
    id: z.string(),
    server_label: z.literal("loopd"),
    name: z.string(),
    arguments: z.string(),
  }),
  z.object({
    type: z.literal("mcp_approval_response"),
    id: z.string(),
    approval_request_id: z.string(),
    approve: z.boolean(),
    reason: z.string().nullable(),
  }),
]);
export const itemListSchema = z.object({
  object: z.literal("list"),
  data: z.array(itemSchema),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});

/** OpenAI's error body: `param` names the field at fault (`items[0].call_id`), `code` is loopd's. */
export const openaiErrorSchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});
