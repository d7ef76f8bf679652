import type { Usage } from "../core/usage.js";

/** What a conversation's runs used, together; `cost_usd` null when none of them had a price. */
export type UsageTotals = Usage & { cost_usd: number | null };

/** jsonb comes back as an object (pg) or a string (some drivers); sums of bigint as strings. */
export function toUsageTotals(value: unknown): UsageTotals {
  const v = (typeof value === "string" ? JSON.parse(value) : (value ?? {})) as Record<string, unknown>;
  const n = (x: unknown) => Number(x ?? 0);
  return {
    input_tokens: n(v.input_tokens),
    output_tokens: n(v.output_tokens),
    cache_read_tokens: n(v.cache_read_tokens),
    cache_write_tokens: n(v.cache_write_tokens),
    cost_usd: v.cost_usd === null || v.cost_usd === undefined ? null : Number(v.cost_usd),
  };
}
