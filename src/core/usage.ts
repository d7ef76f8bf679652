/** Tokens a model call used, as both providers report them (input without its cached part). */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

/** A run's usage: its tokens, and what they cost (null when its model has no price). */
export type RunUsage = Usage & { cost_usd?: number | null };

export const emptyUsage = (): Usage => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_read_tokens: a.cache_read_tokens + b.cache_read_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
  };
}

/** Every token of a call or a run: input and output, cache reads and writes included (they are billed too). */
export const totalTokens = (u: Usage) => u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;

/** USD rounded to 1e-9, so sums of binary fractions read as the decimals they are (0.3, not 0.30000000000000004). */
export const roundUsd = (n: number) => Math.round(n * 1e9) / 1e9;
