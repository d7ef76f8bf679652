import { roundUsd, type Usage } from "../../core/usage.js";

/** USD per million tokens, one figure per kind of token loopd counts in {@link Usage}. */
export interface ModelPrice {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

const price = (input: number, output: number, cache_read: number, cache_write: number): ModelPrice =>
  Object.freeze({ input, output, cache_read, cache_write });

/**
 * Public list prices in USD per million tokens at the time of writing (late
 * 2025 / early 2026); they go stale, so `PRICES_FILE` overrides them. Keys are
 * model ids without a date: `claude-sonnet-4-5-20250929` finds
 * `claude-sonnet-4-5` (see {@link createPriceTable}).
 *
 * Anthropic's cache write is the 5-minute rate (1.25× input), its cache read
 * 0.1× input. OpenAI charges nothing extra to write its cache, so
 * `cache_write` is the input price; loopd records 0 cache-write tokens for
 * OpenAI anyway.
 */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  "claude-opus-4": price(15, 75, 1.5, 18.75),
  "claude-opus-4-1": price(15, 75, 1.5, 18.75),
  "claude-opus-4-5": price(5, 25, 0.5, 6.25),
  // Listed so the prefix rule does not give it claude-opus-4's (3× higher) price.
  "claude-opus-4-6": price(5, 25, 0.5, 6.25),
  "claude-sonnet-4": price(3, 15, 0.3, 3.75),
  "claude-sonnet-4-5": price(3, 15, 0.3, 3.75),
  "claude-sonnet-4-6": price(3, 15, 0.3, 3.75),
  "claude-haiku-4-5": price(1, 5, 0.1, 1.25),
  "claude-3-5-haiku": price(0.8, 4, 0.08, 1),
  "gpt-4o": price(2.5, 10, 1.25, 2.5),
  "gpt-4o-mini": price(0.15, 0.6, 0.075, 0.15),
  "gpt-4.1": price(2, 8, 0.5, 2),
  "gpt-4.1-mini": price(0.4, 1.6, 0.1, 0.4),
  "gpt-4.1-nano": price(0.1, 0.4, 0.025, 0.1),
  o1: price(15, 60, 7.5, 15),
  "o1-mini": price(1.1, 4.4, 0.55, 1.1),
  // Without their rows, the prefix rule would give these their family's price: 10× (o3-pro), 12× (gpt-5-pro) too low.
  "o1-pro": price(150, 600, 150, 150),
  o3: price(2, 8, 0.5, 2),
  "o3-mini": price(1.1, 4.4, 0.55, 1.1),
  "o3-pro": price(20, 80, 20, 20),
  "o3-deep-research": price(10, 40, 2.5, 10),
  "o4-mini": price(1.1, 4.4, 0.275, 1.1),
  "o4-mini-deep-research": price(2, 8, 0.5, 2),
  "gpt-5": price(1.25, 10, 0.125, 1.25),
  "gpt-5-mini": price(0.25, 2, 0.025, 0.25),
  "gpt-5-nano": price(0.05, 0.4, 0.005, 0.05),
  "gpt-5-pro": price(15, 120, 15, 15),
  // The offline mock provider's model costs nothing.
  "loopd-mock": price(0, 0, 0, 0),
});

export interface PriceTable {
  /** The price for `model`, or null when no key matches it. */
  priceOf(model: string): ModelPrice | null;
  /**
   * What `usage` cost in USD, rounded to 1e-9, or null when `model` has no price.
   *
   * `input_tokens * input + output_tokens * output + cache_read_tokens *
   * cache_read + cache_write_tokens * cache_write`, per million. This is right
   * for both providers because loopd stores `input_tokens` without the cached
   * part: Anthropic reports it that way (cache reads and writes come in their
   * own fields), and the OpenAI provider subtracts `cached_tokens` from
   * `prompt_tokens` (see `mapOpenAIUsage`), so no token is billed twice.
   */
  costOf(model: string, usage: Usage): number | null;
}

/**
 * A price table over {@link DEFAULT_PRICES} and `overrides` (which win for the
 * same key). A model id finds its exact key, else the longest key it starts
 * with where the key is followed by `-`: `gpt-4o-mini-2024-07-18` finds
 * `gpt-4o-mini`, not `gpt-4o`. A variant not listed therefore gets its
 * family's price: every variant priced apart from its family is listed
 * (`o3-pro`, `gpt-5-pro`, …; the test checks each row); list a new one here
 * or in `PRICES_FILE`.
 */
export function createPriceTable(overrides: Record<string, ModelPrice> = {}): PriceTable {
  const prices = new Map<string, ModelPrice>(Object.entries({ ...DEFAULT_PRICES, ...overrides }));

  function priceOf(model: string): ModelPrice | null {
    const exact = prices.get(model);
    if (exact) return exact;
    let best: string | undefined;
    for (const key of prices.keys()) {
      if (model.startsWith(`${key}-`) && (best === undefined || key.length > best.length)) best = key;
    }
    return best === undefined ? null : (prices.get(best) ?? null);
  }

  function costOf(model: string, usage: Usage): number | null {
    const p = priceOf(model);
    if (!p) return null;
    const perMillion =
      usage.input_tokens * p.input +
      usage.output_tokens * p.output +
      usage.cache_read_tokens * p.cache_read +
      usage.cache_write_tokens * p.cache_write;
    return roundUsd(perMillion / 1e6);
  }

  return { priceOf, costOf };
}
