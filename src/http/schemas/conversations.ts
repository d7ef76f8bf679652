import { z } from "zod";
import { DEFAULT_CONTEXT, type ContextSettings } from "../../core/context-settings.js";
import { textBlockSchema } from "../../core/messages.js";
import { PROVIDER_NAMES } from "../../core/model-provider.js";
import { HISTORY_FORMATS } from "../../providers/registry.js";
import { documentInputSchema, imageInputSchema } from "../../core/attachment-input.js";
import { isCheckableSchema, isObjectSchema } from "../../json-schema/json-schema.js";
import { isPgSafe } from "../../store/pg-safe.js";
import { TOOL_NAME } from "../../tools/define-tool.js";
import { WEBHOOK_EVENTS } from "../../store/schema.js";
import { jsonDepth } from "../plugins/json-nesting.js";
import { withExamples } from "../openapi.js";

/**
 * What clients send, as zod: path params, bodies, headers and queries. Bodies
 * are strict and every string is one Postgres can store, so bad input is a
 * 400 naming its field before anything runs.
 */

export const providerSchema = z.enum(PROVIDER_NAMES);

/** A budget as a client sends it (a request's, or a conversation's defaults); each field optional. */
export const budgetSchema = z.strictObject({
  max_steps: z.number().int().min(1).optional(),
  max_tokens: z.number().int().positive().optional(),
  max_seconds: z
    .number()
    .positive()
    .max(86_400 * 7)
    .optional(),
  max_cost_usd: z.number().positive().optional(),
  grace_turn: z.boolean().optional(),
});

/** A conversation's `context` as a client writes it; what it leaves out takes the default. */
export const contextSchema = z
  .strictObject({
    strategy: z.enum(["full", "trim", "summarize"]).optional(),
    keep_tool_results: z.number().int().min(0).max(1000).optional(),
    max_input_tokens: z.number().int().min(1000).max(10_000_000).nullable().optional(),
    summary_model: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(200)
      .refine(isPgSafe, "must not contain NUL characters or unpaired surrogates")
      .optional(),
  })
  .superRefine((c, ctx) => {
    if (c.strategy === "summarize" && (c.max_input_tokens === undefined || c.max_input_tokens === null)) {
      ctx.addIssue({
        code: "custom",
        path: ["max_input_tokens"],
        message: "is required with strategy summarize: past it, the oldest exchanges are summarised",
      });
    }
    if (c.summary_model !== undefined && c.strategy !== "summarize")
      ctx.addIssue({ code: "custom", path: ["summary_model"], message: "applies only to strategy summarize" });
  })
  .transform((c): ContextSettings => ({ ...DEFAULT_CONTEXT, ...c }));

/** Bounds of free-form JSON a client stores (metadata now, JSON Schemas later). */
export const FREE_JSON = { maxDepth: 32, maxBytes: 16_384 };

/** `finish` on a request or a conversation: the run ends with a `finish` call, its `result` matching `result_schema`. */
export const finishSchema = z.strictObject({
  result_schema: boundedJsonObject(FREE_JSON)
    .refine(
      isCheckableSchema,
      "must be a JSON Schema loopd can check (no unresolved $ref; patterns RE2 can run: no lookarounds or backreferences)",
    )
    .optional(),
});

export const SAFE_MESSAGE = "must not contain NUL characters or unpaired surrogates";
/** A string Postgres can store (or look up: a NUL in a query's parameter is an error too). */
const text = () => z.string().refine(isPgSafe, SAFE_MESSAGE);

const id = () => text().min(1, "must not be empty").max(100, "must be at most 100 characters");
export const conversationParams = z.object({ id: id().describe("The conversation's id (`conv_…`)") });
export const runParams = conversationParams.extend({ run_id: id().describe("The run's id (`run_…`)") });
export const attachmentParams = conversationParams.extend({
  attachment_id: id().describe("The attachment's id (`att_…`)"),
});
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
      ctx.addIssue({
        code: "custom",
        message: `must nest at most ${maxDepth} levels deep`,
        params: { limit: maxDepth },
      });
      return;
    }
    const bytes = Buffer.byteLength(JSON.stringify(value));
    if (bytes > maxBytes) {
      ctx.addIssue({
        code: "custom",
        message: `must be at most ${maxBytes} bytes as JSON (it is ${bytes})`,
        params: { limit: maxBytes },
      });
      return;
    }
    if (!isPgSafe(value)) ctx.addIssue({ code: "custom", message: SAFE_MESSAGE });
  });
}

/** Where a run's end is POSTed: an http(s) URL (whether its address may be reached is checked by the service), and which run events. */
export const webhookSchema = z.strictObject({
  url: text()
    .max(2_000)
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an http:// or https:// URL"),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length).optional(),
});

// Bodies are strict: a misspelt field (`max_step`) is a 400 naming it, not silently ignored.
export const conversationFields = z.strictObject({
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
        input_schema: boundedJsonObject(FREE_JSON).refine(
          isObjectSchema,
          'must be a JSON Schema of an object: {"type": "object", "properties": {…}}',
        ),
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
  /** null: none. */
  webhook: webhookSchema.nullable().optional(),
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
        input_schema: {
          type: "object",
          properties: { customer: { type: "string" }, amount: { type: "number" } },
          required: ["customer", "amount"],
        },
      },
    ],
  },
});
/** PATCH: the same fields, for the runs to come. */
export const updateConversationBody = withExamples(conversationFields, {
  "a new title, and older tool results sent as stubs": {
    title: "Tokyo trip, day 2",
    context: { strategy: "trim", keep_tool_results: 6 },
  },
});

/** `POST …/fork`; the body itself is optional. */
export const forkBody = withExamples(
  z
    .strictObject({
      at_seq: z.number().int().min(0).max(2_147_483_647).optional(),
      title: text().max(500).nullable().optional(),
    })
    .nullish(),
  { "from message 4, retitled": { at_seq: 4, title: "Tokyo trip, another way" } },
);

/** Says what a field takes, and that it is missing when it is. */
const expecting = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? `is required: ${what}` : `must be ${what}`),
});

export const toolChoiceSchema = z.union(
  [z.enum(["auto", "none", "required"]), z.strictObject({ name: name() })],
  expecting('"auto", "none", "required" or {"name": "<tool>"}'),
);

const userTextBlock = z.strictObject({ ...textBlockSchema.shape, text: filled() });
/** Text, an image or a document; their bytes are checked when the message is sent (a 400 naming `body.content[i]`). */
const userBlock = z.discriminatedUnion("type", [userTextBlock, imageInputSchema, documentInputSchema]);

export const sendMessageBody = withExamples(
  z.strictObject({
    content: z.union(
      [filled(), z.array(userBlock).min(1, "must hold at least one block")],
      expecting('a non-empty string or an array of blocks ({"type": "text", "text": "…"}, images and documents)'),
    ),
    max_steps: z.number().int().min(1).optional(),
    budget: budgetSchema.optional(),
    finish: finishSchema.nullable().optional(),
    tool_choice: toolChoiceSchema.optional(),
    model: name().max(200).optional(),
    stream: z.boolean().optional(),
    on_busy: z.enum(["reject", "enqueue", "interrupt"]).optional(),
    /** false (with `stream: false`): 202 with the run at once. */
    wait: z.boolean().optional(),
    /** This run's webhook instead of the conversation's; null: none for this run. */
    webhook: webhookSchema.nullable().optional(),
  }),
  {
    "a question the mock answers with a tool": { content: "What time is it in Tokyo?" },
    "streamed, at most 5 model calls": { content: "What is (3+4)^2?", stream: true, max_steps: 5, tool_choice: "auto" },
    "the mock calls an offered tool spelt `name {json}`": { content: 'calculate {"expression": "12*7"}' },
    "text and an image (a 1×1 PNG) as base64": {
      content: [
        { type: "text", text: "What is in this picture?" },
        {
          type: "image",
          source: {
            type: "base64",
            media_type: "image/png",
            data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
          },
        },
      ],
    },
  },
);

export const idempotencyHeaders = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, "must be printable ASCII")
    .optional()
    .describe(
      "A retry with the same key and body returns the same run and creates nothing new; the same key with another body is a 409",
    ),
});

/** `POST …/runs/:run_id/actions`: every pending call answered in one request. */
export const answerActionsBody = withExamples(
  z.strictObject({
    approvals: z
      .array(z.strictObject({ tool_call_id: id(), approve: z.boolean(), reason: text().max(2_000).optional() }))
      .max(128)
      .default([]),
    tool_outputs: z
      .array(
        z.strictObject({ tool_call_id: id(), output: text().max(1_000_000), is_error: z.boolean().default(false) }),
      )
      .max(128)
      .default([]),
    actor: text().max(200).optional(),
    stream: z.boolean().optional(),
  }),
  {
    "approve a call": { approvals: [{ tool_call_id: "mock_call_1", approve: true }], actor: "ada@example.com" },
    "deny a call, saying why": {
      approvals: [{ tool_call_id: "mock_call_2", approve: false, reason: "too big to matter" }],
    },
    "a client tool's output, then stream the rest": {
      tool_outputs: [{ tool_call_id: "mock_call_1", output: "INV-42 created for ACME, 120.00 EUR" }],
      stream: true,
    },
  },
);

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
  format: z
    .enum(HISTORY_FORMATS)
    .optional()
    .describe("The whole history in this provider's own format instead of a page of canonical messages"),
});

export const eventsQuery = z.object({
  after: position()
    .optional()
    .describe("Events after this event id (`Last-Event-ID` wins when both are sent); neither: from the first"),
});

export const contextQuery = z.strictObject({
  format: z
    .enum(PROVIDER_NAMES)
    .optional()
    .describe("The provider whose request to show; default: the conversation's provider"),
});
