import { z } from "zod";
import { runSchema } from "./runs.js";

/** The trace route's shapes (the API contract, "Traces"). */

export const traceQuery = z.object({
  /** `requests`: each model call's request whole, exactly as the provider received it. */
  expand: z.enum(["requests"]).optional(),
});

const usage = z.looseObject({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_read_tokens: z.number(),
  cache_write_tokens: z.number(),
});
/** A run's usage in its spans: its tokens, and what they cost (null for a model without a price). */
const runUsage = usage.extend({ cost_usd: z.number().nullable().optional() });

const contextSettings = z.object({
  strategy: z.enum(["full", "trim", "summarize"]),
  keep_tool_results: z.number().int(),
  max_input_tokens: z.number().int().nullable(),
  summary_model: z.string().optional(),
});

/** What a model call's request was built from, besides its setup and the stored history; with `?expand=requests`, also `body`: the request whole. */
const modelRequestSchema = z.looseObject({
  history_length: z.number().int().describe("the call was built from the stored messages with seq 1 … history_length"),
  token_ratio: z.number(),
  tool_choice: z.unknown(),
  setup: z
    .string()
    .describe(
      "the hash of the model.setup span with the provider, model, system prompt, tools, context settings and limits",
    ),
  body_sha256: z
    .string()
    .nullable()
    .describe("sha256 of the body handed to the provider's SDK, as canonical JSON (object keys sorted, messages last)"),
  body: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("with ?expand=requests: the request exactly as the provider received it"),
});

/** What every attempt of a model call has, answered or not. */
const modelCallShape = {
  step: z.number().int(),
  provider: z.string().describe("the provider the attempt went to (with fallbacks, not always the run's)"),
  model: z.string().describe("the model the attempt asked for"),
  started_at: z.string(),
  latency_ms: z.number(),
  request: modelRequestSchema,
  request_verified: z.boolean().optional().describe("with ?expand=requests: the rebuilt body has the recorded sha256"),
};

const span = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.looseObject({ seq: z.number().int(), type: z.literal(type), at: z.string(), ...shape });

export const traceSpanSchema = z.discriminatedUnion("type", [
  span("model.setup", {
    hash: z.string(),
    provider: z.string(),
    model: z.string(),
    system: z.string().nullable(),
    tools: z.array(z.unknown()),
    context: contextSettings,
    fixed_tokens: z.number(),
    max_tokens: z.number().int(),
    cache_key: z.string().nullable(),
  }),
  // A model call's attempt: answered, or failed (retried or fallen over, or the step's end); `provider` and `model` are its setup's.
  z.discriminatedUnion("outcome", [
    span("model.call", {
      ...modelCallShape,
      outcome: z.literal("ok"),
      ttft_ms: z.number().nullable(),
      response: z.looseObject({
        message_seq: z.number().int().nullable(),
        content: z.array(z.unknown()),
        stop_reason: z.string(),
        raw_stop_reason: z.string().nullable(),
        usage,
        model: z.string().describe("the model that answered, as the provider named it"),
        request_id: z.string().nullable(),
      }),
    }),
    span("model.call", {
      ...modelCallShape,
      outcome: z.literal("failed"),
      error: z.string(),
      status: z.number().nullable().describe("the provider's HTTP status; null when no response came back"),
    }),
  ]),
  span("tool.call", {
    tool_call_id: z.string(),
    name: z.string(),
    input: z.record(z.string(), z.unknown()).optional(),
    output: z.string().nullable(),
    is_error: z.boolean(),
    status: z.enum(["ok", "error", "timeout", "cancelled"]).optional(),
    duration_ms: z.number().optional(),
    source: z.enum(["executed", "client", "declined", "loopd"]),
    result_seq: z.number().int(),
  }),
  span("notice", { message_seq: z.number().int(), text: z.string() }),
  span("context.summary", {
    started_at: z.string(),
    latency_ms: z.number(),
    provider: z.string(),
    model: z.string(),
    summarizes: z.object({ from_seq: z.number().int(), to_seq: z.number().int() }),
    summary_seq: z
      .number()
      .int()
      .nullable()
      .describe("the saved summary message; null when the call failed and the exchanges were left out instead"),
    usage: usage.nullable(),
    cost_usd: z.number().nullable(),
    request: z.record(z.string(), z.unknown()).describe("the summary call's request as its provider received it"),
    answer: z.string().nullable(),
    error: z.string().nullable(),
  }),
  span("action.answered", {
    actor: z.string().nullable(),
    approvals: z.array(z.unknown()),
    tool_outputs: z.array(z.unknown()),
  }),
  span("run.recovered", { steps: z.number().int(), interrupted_calls: z.number().int() }),
  span("run.paused", {
    pending: z.array(z.unknown()),
    timeout_s: z.number(),
    steps: z.number().int(),
    usage: runUsage,
  }),
  span("run.end", {
    status: z.string(),
    stop_reason: z.string().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    steps: z.number().int(),
    usage: runUsage,
    completed_at: z.string().nullable(),
  }),
]);

export const traceResponse = z.object({ run: runSchema, spans: z.array(traceSpanSchema) });
