import { z } from "zod";
import { blank, booleanFromEnv } from "../util/env-values.js";

/** A ceiling from the environment: unset (or empty) is none. */
const ceiling = (n: z.ZodNumber) => z.preprocess((v) => (blank(v) ? undefined : Number(v)), n.positive().optional());

/** `provider/model` with `*` for any run of characters: `anthropic/claude-*`. */
const MODEL_PATTERN = /^(anthropic|openai|mock|\*)\/[^\s,/]+$/;

/** The variables of the operator's ceilings (composed into config.ts's). */
export const ceilingVariables = {
  /** The most a run may be given of each budget: a request or a conversation asking for more, or for no limit, gets this. */
  RUN_MAX_COST_USD_LIMIT: ceiling(z.number()),
  RUN_MAX_TOKENS_LIMIT: ceiling(z.number().int()),
  RUN_MAX_SECONDS_LIMIT: ceiling(z.number()),
  /** `anthropic/claude-*,openai/gpt-5*`: the only models conversations, messages and summaries may name; unset: any. */
  MODELS_ALLOWED: z.preprocess(
    (v) => (blank(v) ? undefined : v),
    z
      .string()
      .transform((s) =>
        s
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean),
      )
      .pipe(
        z
          .array(
            z
              .string()
              .regex(
                MODEL_PATTERN,
                "must be provider/model patterns separated by commas, * matching anything (anthropic/claude-*,openai/gpt-5*)",
              ),
          )
          .min(1),
      )
      .optional(),
  ),
  /** What one tenant's runs may cost in a UTC day; past it, new runs are refused (429) until the next day. */
  TENANT_DAILY_COST_USD: ceiling(z.number()),
  /** true: the offline `mock` provider is offered with API keys on too (with keys off it always is). */
  MOCK_PROVIDER: booleanFromEnv("false"),
};

type CeilingVariables = z.output<z.ZodObject<typeof ceilingVariables>>;

export function ceilingSettingsOf(e: CeilingVariables) {
  return {
    /** Null: no ceiling. */
    maxCostUsd: e.RUN_MAX_COST_USD_LIMIT ?? null,
    maxTokens: e.RUN_MAX_TOKENS_LIMIT ?? null,
    maxSeconds: e.RUN_MAX_SECONDS_LIMIT ?? null,
    /** Null: every model is allowed. */
    modelsAllowed: e.MODELS_ALLOWED ?? null,
    /** Null: no daily limit. */
    tenantDailyCostUsd: e.TENANT_DAILY_COST_USD ?? null,
  };
}

export type CeilingSettings = ReturnType<typeof ceilingSettingsOf>;

/** Whether `provider/model` matches one of `patterns` (`*`: any run of characters, the whole id matched). */
export function modelAllowed(patterns: readonly string[] | null, provider: string, model: string): boolean {
  if (patterns === null) return true;
  const id = `${provider}/${model}`;
  return patterns.some((p) => new RegExp(`^${p.split("*").map(escapeRegExp).join(".*")}$`).test(id));
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
