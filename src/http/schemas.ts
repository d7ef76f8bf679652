import { z } from "zod";
import { messageSchema, textBlockSchema } from "../agent/messages.js";

/** The contract's shapes, as zod: routes validate with them and /openapi.json is generated from them. */

export const errorSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()) }),
});

export const providerSchema = z.enum(["anthropic", "openai", "mock"]);

export const usageSchema = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_read_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
});

export const runSchema = z.object({
  id: z.string(),
  conversation_id: z.string(),
  status: z.enum(["queued", "running", "requires_action", "completed", "incomplete", "failed", "cancelled"]),
  stop_reason: z.string().nullable(),
  steps: z.number().int(),
  provider: z.string(),
  model: z.string(),
  usage: usageSchema,
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_at: z.string(),
  completed_at: z.string().nullable(),
});

export const conversationSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  title: z.string().nullable(),
  system: z.string().nullable(),
  provider: z.string(),
  model: z.string(),
  tools: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
  message_count: z.number().int(),
  active_run_id: z.string().nullable(),
});

export { messageSchema };

export const conversationParams = z.object({ id: z.string().min(1).max(100) });
export const runParams = conversationParams.extend({ run_id: z.string().min(1).max(100) });

const nonBlank = z.string().trim().min(1);

const conversationFields = z.object({
  system: z.string().max(100_000).nullable().optional(),
  title: z.string().max(500).nullable().optional(),
  provider: providerSchema.optional(),
  model: nonBlank.max(200).optional(),
  tools: z.array(nonBlank.max(100)).max(100).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** Every field is optional, and so is the body itself. */
export const createConversationBody = conversationFields.nullish();
/** PATCH: the same fields, for the runs to come. */
export const updateConversationBody = conversationFields;

export const toolChoiceSchema = z.union([z.enum(["auto", "none", "required"]), z.object({ name: nonBlank })]);

export const sendMessageBody = z.object({
  content: z.union([
    z.string().refine((s) => s.trim().length > 0, "must not be empty"),
    z
      .array(textBlockSchema.extend({ text: z.string().refine((s) => s.trim().length > 0, "must not be empty") }))
      .min(1, "must hold at least one text block"),
  ]),
  max_steps: z.number().int().min(1).optional(),
  tool_choice: toolChoiceSchema.optional(),
  model: nonBlank.max(200).optional(),
  stream: z.boolean().optional(),
});

export const sendMessageResponse = z.object({
  run: runSchema,
  messages: z.array(messageSchema),
  output_text: z.string(),
});

const limit = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const listQuery = z.object({ limit: limit(100, 20), cursor: z.string().max(500).optional() });

export const messagesQuery = z.object({
  after_seq: z.coerce.number().int().min(0).default(0),
  limit: limit(1000, 100),
  format: z.enum(["anthropic", "openai"]).optional(),
});

export const eventsQuery = z.object({ after: z.coerce.number().int().min(0).optional() });

export const pageOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), next_cursor: z.string().nullable() });
