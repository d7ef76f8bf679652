import { z } from "zod";
import { PROVIDER_NAMES } from "../../core/model-provider.js";
import { isPgSafe } from "../../store/pg-safe.js";
import { jsonDepth } from "../plugins/json-nesting.js";

/**
 * The pieces every resource's schemas are built of: strings Postgres can
 * store, ids, names, bounded free-form JSON, pages and usage. Bodies are
 * strict and every string is one Postgres can store, so bad input is a 400
 * naming its field before anything runs.
 */

export const providerSchema = z.enum(PROVIDER_NAMES);
/** What a run does when every model is down. */
export const onProviderOutageSchema = z.enum(["fail", "wait"]);

/** Bounds of free-form JSON a client stores (metadata now, JSON Schemas later). */
export const FREE_JSON = { maxDepth: 32, maxBytes: 16_384 };

export const SAFE_MESSAGE = "must not contain NUL characters or unpaired surrogates";
/** A string Postgres can store (or look up: a NUL in a query's parameter is an error too). */
export const text = () => z.string().refine(isPgSafe, SAFE_MESSAGE);

export const id = () => text().min(1, "must not be empty").max(100, "must be at most 100 characters");

/** Names (models, tools) lose surrounding white space; text the user wrote is kept as written. */
export const name = () => text().trim().min(1, "must not be empty");
export const filled = () => text().refine((s) => s.trim().length > 0, "must not be empty");

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

/** Says what a field takes, and that it is missing when it is. */
export const expecting = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? `is required: ${what}` : `must be ${what}`),
});

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

export const limit = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const listQuery = z.object({
  limit: limit(100, 20).describe("Items per page"),
  cursor: z.string().max(500).optional().describe("The `next_cursor` of the previous page"),
});

/** Event and message numbers are Postgres integers. */
export const position = () => z.coerce.number().int().min(0).max(2_147_483_647);

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), next_cursor: z.string().nullable() });

export const usageSchema = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_read_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
  /** USD, from the price table; null when the model has no price. */
  cost_usd: z.number().nullable(),
});
