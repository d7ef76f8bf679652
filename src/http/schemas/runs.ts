import { z } from "zod";
import { messageSchema } from "../../core/messages.js";
import { PROVIDER_NAMES } from "../../core/model-provider.js";
import { documented } from "../openapi.js";
import { budgetSchema, finishSchema } from "./conversations.js";

/** The contract's answers, as zod: routes declare them and /openapi.json is generated from them. */

export const usageSchema = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_read_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
  /** USD, from the price table; null when the model has no price. */
  cost_usd: z.number().nullable(),
});

const contextSettingsSchema = z.object({
  strategy: z.enum(["full", "trim", "summarize"]),
  keep_tool_results: z.number().int(),
  max_input_tokens: z.number().int().nullable(),
  summary_model: z.string().optional(),
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
  /** Which budget ended the run, when one did. */
  budget_exceeded: z.enum(["steps", "tokens", "seconds", "cost"]).optional(),
  /** The limits the run was given. */
  budget: z
    .object({
      max_steps: z.number(),
      max_tokens: z.number().nullable(),
      max_seconds: z.number().nullable(),
      max_cost_usd: z.number().nullable(),
      grace_turn: z.boolean(),
    })
    .optional(),
  /** On a run asked to end with `finish`: what the call reported, or null. */
  result: z
    .object({ summary: z.string(), confidence: z.number().nullable(), result: z.unknown() })
    .nullable()
    .optional(),
  /** While `queued`: the run just ahead of it (active or queued). */
  queued_behind: z.string().nullable().optional(),
  /** While `requires_action`: the calls it waits on. */
  required_action: z
    .object({
      expires_at: z.string(),
      tool_calls: z.array(
        z.object({
          tool_call_id: z.string(),
          name: z.string(),
          input: z.record(z.string(), z.unknown()),
          action: z.enum(["approve", "submit_output"]),
        }),
      ),
    })
    .optional(),
});

export const clientToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
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
  approval_required: z.array(z.string()),
  client_tools: z.array(clientToolSchema),
  action_timeout_s: z.number().int().nullable(),
  budget: budgetSchema.nullable(),
  finish: finishSchema.nullable(),
  /** How each model call is sent the history. */
  context: contextSettingsSchema,
  /** Prompt caching (on unless turned off). */
  caching: z.boolean(),
  /** What its runs used, together. */
  usage: usageSchema,
  message_count: z.number().int(),
  active_run_id: z.string().nullable(),
  /** The AI SDK chat id that names it on `/ui/chat`; null when none. */
  chat_id: z.string().nullable(),
  webhook: z.object({ url: z.string(), events: z.array(z.string()).optional() }).nullable(),
  forked_from: z.object({ conversation_id: z.string(), seq: z.number().int() }).nullable(),
});

export { messageSchema };

export const sendMessageResponse = z.object({
  run: runSchema,
  messages: z.array(messageSchema),
  output_text: z.string(),
});

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), next_cursor: z.string().nullable() });

/** `GET /conversations/:id/context`: what the next model call would be sent. */
export const contextResponse = documented(
  z.object({
    format: z.enum(PROVIDER_NAMES),
    /** loopd's estimate of the request's input tokens, calibrated by the provider's last count. */
    estimated_input_tokens: z.number().int(),
    /** Old tool results sent as a short stub (`trim`). */
    stubbed_tool_results: z.number().int(),
    /** Messages of the history not sent: refused turns, and old exchanges cut to fit `max_input_tokens`. */
    left_out: z.object({ refused: z.number().int(), trimmed: z.number().int() }),
    /** The request body exactly as the provider's SDK is given it. */
    request: z.record(z.string(), z.unknown()),
  }),
  "What the next model call would be sent",
  {
    format: "openai",
    estimated_input_tokens: 2180,
    stubbed_tool_results: 3,
    left_out: { refused: 0, trimmed: 0 },
    request: {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "You are a helpful assistant." },
        { role: "user", content: "What time is it in Tokyo?" },
      ],
      max_completion_tokens: 4096,
      prompt_cache_key: "conv_0mx3f31orsipb4b4h80aja1l0",
      stream: true,
      stream_options: { include_usage: true },
    },
  },
);
