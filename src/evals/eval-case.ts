import { RE2JS } from "re2js";
import { z } from "zod";
import { messageSchema } from "../core/messages.js";
import { PROVIDER_NAMES } from "../core/model-provider.js";
import { isCheckableSchema } from "../json-schema/json-schema.js";

/**
 * An eval case (the API contract, "Evals from real runs"): a conversation's
 * settings, what came before the run, the run's user message, the tool
 * results it got, and what a good run does. `GET …/eval-case` answers one
 * built from a run; `npm run eval` reads them from files. One schema for
 * both: a case the route wrote is a case the runner reads.
 */

/** A tool result of the recorded run: it answers a call with this name and this input (canonical JSON). */
export const recordedResultSchema = z.object({
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  content: z.string(),
  is_error: z.boolean(),
});

/** A regular expression as RE2 runs it (linear time: a case file's pattern cannot hold the runner). */
const re2Pattern = z.string().superRefine((pattern, ctx) => {
  try {
    RE2JS.compile(pattern);
  } catch (err) {
    ctx.addIssue({
      code: "custom",
      message: `is not a regular expression RE2 can run: ${err instanceof Error ? err.message : String(err)}`,
    });
  }
});

export const expectationsSchema = z.strictObject({
  /** The tools the run calls, by name, in order. */
  tool_calls: z.array(z.string()),
  /** The run's final text: it holds `contains`, and matches `regex` (RE2 syntax). */
  final_text: z.strictObject({ contains: z.string().optional(), regex: re2Pattern.optional() }).optional(),
  /** The run ends with a `finish` call whose `result` matches this JSON Schema (the run is offered the finish tool with it). */
  finish_result: z
    .record(z.string(), z.unknown())
    .refine(isCheckableSchema, "is not a JSON Schema loopd can check (see the finish tool's result_schema)")
    .optional(),
  /** At most this many model calls. */
  max_steps: z.number().int().positive().optional(),
  /** At most this cost (USD, from the price table; a model without a price fails it). */
  max_cost_usd: z.number().nonnegative().optional(),
});

/** A content block, as the API shows it (text, tool call and result, image, document): checked where it is used. */
const blockSchema = z.looseObject({ type: z.string() });

/** A message of the history: as the API shows it (its id, seq and times are not needed). */
const historyMessageSchema = messageSchema
  .partial({ id: true, seq: true, run_id: true, created_at: true })
  .extend({ content: z.array(blockSchema) });

export const evalCaseSchema = z.object({
  name: z.string().min(1),
  conversation: z.object({
    system: z.string().nullable(),
    provider: z.enum(PROVIDER_NAMES),
    model: z.string().min(1),
    tools: z.array(z.string()),
    /** As `POST /conversations` takes them (checked there). */
    context: z.record(z.string(), z.unknown()).nullable().optional(),
    client_tools: z.array(z.record(z.string(), z.unknown())).nullable().optional(),
  }),
  /** The agent version the recorded run ran with (null or absent: none); `npm run eval -- --agent` runs the case on others. */
  agent: z.object({ name: z.string(), version: z.number().int().positive() }).nullable().optional(),
  history: z.array(historyMessageSchema),
  /** The run's user message: its content blocks, or a text. */
  input: z.union([z.string().min(1), z.array(blockSchema).min(1)]),
  recorded: z.array(recordedResultSchema),
  expect: expectationsSchema,
});

export type EvalCase = z.infer<typeof evalCaseSchema>;
export type RecordedResult = z.infer<typeof recordedResultSchema>;
export type Expectations = z.infer<typeof expectationsSchema>;
