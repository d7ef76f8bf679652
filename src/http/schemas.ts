import { z } from "zod";
import { DEFAULT_CONTEXT, type ContextSettings } from "../core/context-settings.js";
import { messageSchema, textBlockSchema } from "../core/messages.js";
import { ERROR_CODES, errorBody, type ErrorCode } from "../errors.js";
import { isPgSafe } from "../store/pg-safe.js";
import { TOOL_NAME } from "../tools/define-tool.js";
import { isCheckableSchema } from "../json-schema.js";
import { jsonDepth } from "./json-nesting.js";
import { documented, withExamples } from "./openapi.js";

/** The contract's shapes, as zod: routes validate with them and /openapi.json is generated from them. */

export const errorSchema = z.object({
  error: z.object({ code: z.enum(ERROR_CODES), message: z.string(), details: z.record(z.string(), z.unknown()) }),
});

/** An error answer as /openapi.json describes it: when it comes, and an example. */
export const errorAnswer = (description: string, code: ErrorCode, message: string, details: Record<string, unknown> = {}) =>
  documented(errorSchema, description, errorBody(code, message, details));

/** Error answers, for /openapi.json: any route may refuse its input, be overloaded or away, or fail. */
export const requestErrorResponses = {
  400: errorAnswer("`invalid_request`: the body, query, params or headers failed validation; `details.field` names the field", "invalid_request", "limit: must be at most 100", { field: "querystring.limit" }),
  500: errorAnswer("`internal`: a bug in loopd; the message says so without internals", "internal", "internal error: this is a bug in loopd, and it has been logged"),
  503: errorAnswer("`unavailable`: the database is unreachable, or the process is overloaded or shutting down; retry after `Retry-After` seconds", "unavailable", "the database is unreachable; try again shortly"),
};
/** A route with ids in its path may not find what they name. */
export const errorResponses = {
  ...requestErrorResponses,
  404: errorAnswer("`not_found`: no such conversation or run", "not_found", "conversation conv_123 does not exist"),
};
/** A route that takes a body may also refuse its size or its type. */
export const bodyLimitResponses = {
  413: errorAnswer("`payload_too_large`: the body is over `BODY_LIMIT_BYTES`; `details.limit` gives the limit", "payload_too_large", "the request body is larger than the 1048576 bytes the server accepts", { limit: 1_048_576 }),
  415: errorAnswer("`unsupported_media_type`: a body not sent as `application/json`", "unsupported_media_type", "request bodies must be JSON, sent with Content-Type: application/json", { content_type: "text/plain" }),
};
export const bodyErrorResponses = { ...errorResponses, ...bodyLimitResponses };

export const providerSchema = z.enum(["anthropic", "openai", "mock"]);

export const usageSchema = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_read_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
  /** USD, from the price table; null when the model has no price. */
  cost_usd: z.number().nullable(),
});

/** A budget as a client sends it (a request's, or a conversation's defaults); each field optional. */
export const budgetSchema = z.strictObject({
  max_steps: z.number().int().min(1).optional(),
  max_tokens: z.number().int().positive().optional(),
  max_seconds: z.number().positive().max(86_400 * 7).optional(),
  max_cost_usd: z.number().positive().optional(),
  grace_turn: z.boolean().optional(),
});

/** A conversation's `context` as a client writes it; what it leaves out takes the default. */
export const contextSchema = z
  .strictObject({
    strategy: z.enum(["full", "trim"]).optional(),
    keep_tool_results: z.number().int().min(0).max(1000).optional(),
    max_input_tokens: z.number().int().min(1000).max(10_000_000).nullable().optional(),
  })
  .transform((c): ContextSettings => ({ ...DEFAULT_CONTEXT, ...c }));

const contextSettingsSchema = z.object({
  strategy: z.enum(["full", "trim"]),
  keep_tool_results: z.number().int(),
  max_input_tokens: z.number().int().nullable(),
});

/** Bounds of free-form JSON a client stores (metadata now, JSON Schemas later). */
export const FREE_JSON = { maxDepth: 32, maxBytes: 16_384 };

/** `finish` on a request or a conversation: the run ends with a `finish` call, its `result` matching `result_schema`. */
export const finishSchema = z.strictObject({
  result_schema: boundedJsonObject(FREE_JSON)
    .refine(isCheckableSchema, "must be a JSON Schema loopd can check (no unresolved $ref; patterns RE2 can run: no lookarounds or backreferences)")
    .optional(),
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
    .object({ max_steps: z.number(), max_tokens: z.number().nullable(), max_seconds: z.number().nullable(), max_cost_usd: z.number().nullable(), grace_turn: z.boolean() })
    .optional(),
  /** On a run asked to end with `finish`: what the call reported, or null. */
  result: z.object({ summary: z.string(), confidence: z.number().nullable(), result: z.unknown() }).nullable().optional(),
  /** While `requires_action`: the calls it waits on. */
  required_action: z
    .object({
      expires_at: z.string(),
      tool_calls: z.array(
        z.object({ tool_call_id: z.string(), name: z.string(), input: z.record(z.string(), z.unknown()), action: z.enum(["approve", "submit_output"]) }),
      ),
    })
    .optional(),
});

export const clientToolSchema = z.object({ name: z.string(), description: z.string(), input_schema: z.record(z.string(), z.unknown()) });

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
});

export { messageSchema };

const SAFE_MESSAGE = "must not contain NUL characters or unpaired surrogates";
/** A string Postgres can store (or look up: a NUL in a query's parameter is an error too). */
const text = () => z.string().refine(isPgSafe, SAFE_MESSAGE);

const id = () => text().min(1, "must not be empty").max(100, "must be at most 100 characters");
export const conversationParams = z.object({ id: id().describe("The conversation's id (`conv_…`)") });
export const runParams = conversationParams.extend({ run_id: id().describe("The run's id (`run_…`)") });
/** Names (models, tools) lose surrounding white space; text the user wrote is kept as written. */
const name = () => text().trim().min(1, "must not be empty");
const filled = () => text().refine((s) => s.trim().length > 0, "must not be empty");

/** The deepest a request body may nest; a free-form field gets less (`FREE_JSON`), so this bound is only for text nobody should send. */
export const BODY_MAX_DEPTH = 64;

/**
 * A JSON object the client chooses freely, bounded in depth and size so that
 * no value is too deep to walk or too big to keep; its depth is measured
 * without recursion.
 */
export function boundedJsonObject({ maxDepth, maxBytes }: { maxDepth: number; maxBytes: number }) {
  return z.record(z.string(), z.unknown(), { error: "must be a JSON object" }).superRefine((value, ctx) => {
    if (jsonDepth(value, maxDepth) > maxDepth) {
      ctx.addIssue({ code: "custom", message: `must nest at most ${maxDepth} levels deep`, params: { limit: maxDepth } });
      return;
    }
    const bytes = Buffer.byteLength(JSON.stringify(value));
    if (bytes > maxBytes) {
      ctx.addIssue({ code: "custom", message: `must be at most ${maxBytes} bytes as JSON (it is ${bytes})`, params: { limit: maxBytes } });
      return;
    }
    if (!isPgSafe(value)) ctx.addIssue({ code: "custom", message: SAFE_MESSAGE });
  });
}

/** The top of a tool's input schema, as both providers require it: an object, its properties (if any) an object. */
function isObjectSchema(schema: Record<string, unknown>): boolean {
  const { type, properties, required } = schema;
  return (
    type === "object" &&
    (properties === undefined || (typeof properties === "object" && properties !== null && !Array.isArray(properties))) &&
    (required === undefined || (Array.isArray(required) && required.every((r) => typeof r === "string")))
  );
}

// Bodies are strict: a misspelt field (`max_step`) is a 400 naming it, not silently ignored.
const conversationFields = z.strictObject({
  system: text().max(100_000).nullable().optional(),
  title: text().max(500).nullable().optional(),
  provider: providerSchema.optional(),
  model: name().max(200).optional(),
  tools: z.array(name().max(100)).max(100).optional(),
  metadata: boundedJsonObject(FREE_JSON).optional(),
  approval_required: z.array(name().max(64)).max(100).optional(),
  client_tools: z
    .array(
      z.strictObject({
        name: text().regex(TOOL_NAME, `must match ${TOOL_NAME.source} (what both providers accept)`),
        description: text().max(10_000).default(""),
        input_schema: boundedJsonObject(FREE_JSON).refine(isObjectSchema, 'must be a JSON Schema of an object: {"type": "object", "properties": {…}}'),
      }),
    )
    .max(64)
    .optional(),
  /** One week at most: a pause is for a person, not a queue. */
  action_timeout_s: z.number().int().min(1).max(604_800).nullable().optional(),
  budget: budgetSchema.nullable().optional(),
  finish: finishSchema.nullable().optional(),
  /** null: the whole history, as by default. */
  context: contextSchema.nullable().optional(),
  caching: z.boolean().optional(),
});

/** Every field is optional, and so is the body itself. */
export const createConversationBody = withExamples(conversationFields.nullish(), {
  "a title and a system prompt": { title: "Tokyo trip", system: "You are a helpful assistant." },
  "calls to calculate wait for a person's approval": { title: "Careful maths", approval_required: ["calculate"] },
  "a client tool the application runs": {
    client_tools: [
      {
        name: "create_invoice",
        description: "Creates an invoice in our accounting system",
        input_schema: { type: "object", properties: { customer: { type: "string" }, amount: { type: "number" } }, required: ["customer", "amount"] },
      },
    ],
  },
});
/** PATCH: the same fields, for the runs to come. */
export const updateConversationBody = withExamples(conversationFields, {
  "a new title, and older tool results sent as stubs": { title: "Tokyo trip, day 2", context: { strategy: "trim", keep_tool_results: 6 } },
});

/** Says what a field takes, and that it is missing when it is. */
const expecting = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? `is required: ${what}` : `must be ${what}`),
});

export const toolChoiceSchema = z.union(
  [z.enum(["auto", "none", "required"]), z.strictObject({ name: name() })],
  expecting('"auto", "none", "required" or {"name": "<tool>"}'),
);

const userTextBlock = z.strictObject({ ...textBlockSchema.shape, text: filled() });

export const sendMessageBody = withExamples(
  z.strictObject({
    content: z.union(
      [filled(), z.array(userTextBlock).min(1, "must hold at least one text block")],
      expecting('a non-empty string or an array of text blocks ({"type": "text", "text": "…"})'),
    ),
    max_steps: z.number().int().min(1).optional(),
    budget: budgetSchema.optional(),
    finish: finishSchema.nullable().optional(),
    tool_choice: toolChoiceSchema.optional(),
    model: name().max(200).optional(),
    stream: z.boolean().optional(),
  }),
  {
    "a question the mock answers with a tool": { content: "What time is it in Tokyo?" },
    "streamed, at most 5 model calls": { content: "What is (3+4)^2?", stream: true, max_steps: 5, tool_choice: "auto" },
    "the mock calls an offered tool spelt `name {json}`": { content: 'calculate {"expression": "12*7"}' },
  },
);

export const idempotencyHeaders = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, "must be printable ASCII")
    .optional()
    .describe("A retry with the same key and body returns the same run and creates nothing new; the same key with another body is a 409"),
});

/** `POST …/runs/:run_id/actions`: every pending call answered in one request. */
export const answerActionsBody = withExamples(
  z.strictObject({
    approvals: z
      .array(z.strictObject({ tool_call_id: id(), approve: z.boolean(), reason: text().max(2_000).optional() }))
      .max(128)
      .default([]),
    tool_outputs: z
      .array(z.strictObject({ tool_call_id: id(), output: text().max(1_000_000), is_error: z.boolean().default(false) }))
      .max(128)
      .default([]),
    actor: text().max(200).optional(),
    stream: z.boolean().optional(),
  }),
  {
    "approve a call": { approvals: [{ tool_call_id: "mock_call_1", approve: true }], actor: "ada@example.com" },
    "deny a call, saying why": { approvals: [{ tool_call_id: "mock_call_2", approve: false, reason: "too big to matter" }] },
    "a client tool's output, then stream the rest": { tool_outputs: [{ tool_call_id: "mock_call_1", output: "INV-42 created for ACME, 120.00 EUR" }], stream: true },
  },
);

export const sendMessageResponse = z.object({
  run: runSchema,
  messages: z.array(messageSchema),
  output_text: z.string(),
});

const limit = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const listQuery = z.object({
  limit: limit(100, 20).describe("Items per page"),
  cursor: z.string().max(500).optional().describe("The `next_cursor` of the previous page"),
});

/** Event and message numbers are Postgres integers. */
const position = () => z.coerce.number().int().min(0).max(2_147_483_647);

export const messagesQuery = z.object({
  after_seq: position().default(0).describe("Messages after this `seq` (the previous page's `next_after_seq`)"),
  limit: limit(1000, 100).describe("Messages per page"),
  format: z.enum(["anthropic", "openai"]).optional().describe("The whole history in this provider's own format instead of a page of canonical messages"),
});

export const eventsQuery = z.object({ after: position().optional().describe("Events after this event id (`Last-Event-ID` wins when both are sent); neither: from the first") });

export const pageOf = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), next_cursor: z.string().nullable() });

export const contextQuery = z.strictObject({
  format: z.enum(["anthropic", "openai", "mock"]).optional().describe("The provider whose request to show; default: the conversation's provider"),
});

/** `GET /conversations/:id/context`: what the next model call would be sent. */
export const contextResponse = documented(
  z.object({
  format: z.enum(["anthropic", "openai", "mock"]),
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
      messages: [{ role: "system", content: "You are a helpful assistant." }, { role: "user", content: "What time is it in Tokyo?" }],
      max_completion_tokens: 4096,
      prompt_cache_key: "conv_0mx3f31orsipb4b4h80aja1l0",
      stream: true,
      stream_options: { include_usage: true },
    },
  },
);
