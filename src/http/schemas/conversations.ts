import { z } from "zod";
import { DEFAULT_CONTEXT, type ContextSettings } from "../../core/context-settings.js";
import { PROVIDER_NAMES } from "../../core/model-provider.js";
import { isCheckableSchema, isObjectSchema } from "../../json-schema/json-schema.js";
import { isPgSafe } from "../../store/pg-safe.js";
import { WEBHOOK_EVENTS } from "../../store/schema.js";
import { TOOL_NAME } from "../../tools/define-tool.js";
import { documented, withExamples } from "../openapi.js";
import {
  boundedJsonObject,
  FREE_JSON,
  id,
  name,
  onProviderOutageSchema,
  providerSchema,
  text,
  usageSchema,
} from "./shared.js";
import { agentName, agentRefSchema, agentVersionNumber } from "./agent-names.js";

/**
 * Conversations, as zod: what clients send (their fields, a fork, the
 * context query) and what they are answered (a conversation, its context).
 */

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

/** `finish` on a request or a conversation: the run ends with a `finish` call, its `result` matching `result_schema`. */
export const finishSchema = z.strictObject({
  result_schema: boundedJsonObject(FREE_JSON)
    .refine(
      isCheckableSchema,
      "must be a JSON Schema loopd can check (no unresolved $ref; patterns RE2 can run: no lookarounds or backreferences)",
    )
    .optional(),
});

export const conversationParams = z.object({ id: id().describe("The conversation's id (`conv_…`)") });

/** Where a run's end is POSTed: an http(s) URL (whether its address may be reached is checked by the service), and which run events. */
export const webhookSchema = z.strictObject({
  url: text()
    .max(2_000)
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an http:// or https:// URL"),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length).optional(),
});

/** A model a step goes on with when the ones before it cannot answer; without `provider`, the conversation's. */
export const fallbacksSchema = z
  .array(z.strictObject({ provider: providerSchema.optional(), model: name().max(200) }))
  .max(5)
  .describe(
    "The models a step goes on with, in order, when the conversation's cannot answer (its retries used up, a used-up quota, a context-window error, or cooling down); a fallback without `provider` keeps the conversation's",
  );

/**
 * A conversation's configuration, as a client writes it: every field of a
 * conversation but its title, and every field an agent's version holds
 * (src/store/schema.ts `Configuration`). Bodies are strict: a misspelt field
 * (`max_step`) is a 400 naming it, not silently ignored.
 */
export const configurationFields = z.strictObject({
  system: text().max(100_000).nullable().optional(),
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
  /** What its runs do when every model is down: `"wait"`: when every model is down the run parks in `waiting` and goes on by itself once a model answers (bounded by `max_seconds`, else `MODEL_OUTAGE_MAX_WAIT_S`); `"fail"` (the default): it ends `failed` with `provider_unavailable`. */
  on_provider_outage: onProviderOutageSchema.optional(),
  /** null: none. */
  webhook: webhookSchema.nullable().optional(),
  /** null or []: none. */
  fallbacks: fallbacksSchema.nullable().optional(),
  /** Agents of the tenant its model may call as tools, each offered as `agent__<name>` (input `{message}`) and run in a child conversation. */
  agents: z.array(agentName()).max(20).optional(),
});

export const conversationFields = configurationFields.extend({ title: text().max(500).nullable().optional() });

/** Every field is optional, and so is the body itself. */
export const createConversationBody = withExamples(conversationFields.extend({ agent: agentRefSchema }).nullish(), {
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
/** PATCH: the same fields, for the runs to come; `agent_version` moves it to another version of its agent. */
export const updateConversationBody = withExamples(
  conversationFields.extend({
    agent_version: agentVersionNumber()
      .optional()
      .describe("Another version of the conversation's agent (between runs only); the overrides stay over it"),
  }),
  {
    "a new title, and older tool results sent as stubs": {
      title: "Tokyo trip, day 2",
      context: { strategy: "trim", keep_tool_results: 6 },
    },
    "moved to version 4 of its agent": { agent_version: 4 },
  },
);

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

export const contextQuery = z.strictObject({
  format: z
    .enum(PROVIDER_NAMES)
    .optional()
    .describe("The provider whose request to show; default: the conversation's provider"),
});

const contextSettingsSchema = z.object({
  strategy: z.enum(["full", "trim", "summarize"]),
  keep_tool_results: z.number().int(),
  max_input_tokens: z.number().int().nullable(),
  summary_model: z.string().optional(),
});

const webhookOut = z.object({ url: z.string(), events: z.array(z.string()).optional() });

export const clientToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});

/** A configuration as it was written (an agent's version, a conversation's overrides): only the fields given. */
export const configurationSchema = z.object({
  system: z.string().nullable().optional(),
  provider: z.string().optional(),
  model: z.string().optional(),
  tools: z.array(z.string()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  approval_required: z.array(z.string()).optional(),
  client_tools: z.array(clientToolSchema).optional(),
  action_timeout_s: z.number().int().nullable().optional(),
  budget: budgetSchema.nullable().optional(),
  finish: finishSchema.nullable().optional(),
  context: contextSettingsSchema.nullable().optional(),
  caching: z.boolean().optional(),
  webhook: webhookOut.nullable().optional(),
  agents: z.array(z.string()).optional(),
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
  /** What its runs do when every model is down (a message may say otherwise for its run). */
  on_provider_outage: onProviderOutageSchema,
  /** What its runs used, together. */
  usage: usageSchema,
  message_count: z.number().int(),
  active_run_id: z.string().nullable(),
  /** The AI SDK chat id that names it on `/ui/chat`; null when none. */
  chat_id: z.string().nullable(),
  webhook: webhookOut.nullable(),
  forked_from: z.object({ conversation_id: z.string(), seq: z.number().int() }).nullable(),
  /** The models its runs' steps go on with when its own cannot answer, each with its provider. */
  fallbacks: z.array(z.object({ provider: z.string(), model: z.string() })),
  /** The agent version it is pinned to; null: not started from an agent. */
  agent: z.object({ name: z.string(), version: z.number().int() }).nullable(),
  /** The fields given beside the agent, over its version's configuration; null without an agent. */
  agent_overrides: configurationSchema.nullable(),
  /** The agents its model may call as tools (`agent__<name>`). */
  agents: z.array(z.string()),
  /** A child agent's conversation: the run and the call (`agent__<name>`) that started it; null otherwise. */
  parent: z.object({ conversation_id: z.string(), run_id: z.string(), tool_call_id: z.string() }).nullable(),
});

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
