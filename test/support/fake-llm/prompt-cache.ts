import { createHash } from "node:crypto";
import { countTokens } from "gpt-tokenizer";
import { isJsonObject, type JsonObject } from "./json-object.js";

/** How a request's input tokens split, as the provider bills them. */
export interface CountedInput {
  /** Billed at the input price. */
  input: number;
  /** Read from the prompt cache (Anthropic bills 0.1× input). */
  cacheRead: number;
  /** Written to the prompt cache (Anthropic bills 1.25× input). */
  cacheWrite: number;
}

/**
 * The tokenizer's byte-pair merge is quadratic in the length of one word:
 * a 150 KB tool result of one repeated letter took it 18 s, the event loop
 * of the test (loopd's too) blocked meanwhile. Counted in pieces of 2,000
 * characters: a word longer than that is counted as a few, a difference of
 * a token or two per piece, which billing arithmetic does not notice.
 */
const PIECE = 2_000;
const countInPieces = (text: string): number => {
  let tokens = 0;
  for (let at = 0; at < text.length; at += PIECE) tokens += countTokens(text.slice(at, at + PIECE));
  return tokens;
};

/** Anthropic caches nothing shorter than this (Sonnet, Opus); OpenAI neither. */
export const MIN_CACHEABLE_TOKENS = 1024;
/** How far back from a breakpoint Anthropic looks for an earlier cached prefix, in blocks. */
const LOOKBACK_BLOCKS = 20;
/** OpenAI's cache hits come in steps of 128 tokens. */
const OPENAI_CACHE_STEP = 128;

/**
 * The prompt caches of both APIs, as their documentation describes them,
 * so that what loopd's requests would be billed can be checked offline:
 *
 * - Anthropic caches only up to `cache_control` breakpoints: a request reads
 *   the longest prefix (tools, then system, then message blocks, in that
 *   order) that is byte-identical to one an earlier request cached and that
 *   ends at one of its breakpoints or at most 20 blocks before one; it then
 *   writes everything up to its last breakpoint. Prefixes under 1,024
 *   tokens are never cached.
 * - OpenAI caches every prompt of 1,024 tokens or more by itself; a request
 *   reads the longest prefix (at message boundaries here) an earlier one
 *   had, in steps of 128 tokens.
 *
 * Tokens are counted with a real tokenizer (o200k), not Claude's, which is
 * near enough for billing arithmetic. The cache never expires (a test is
 * shorter than its five minutes).
 */
export function createPromptCache() {
  // The tokenizer loads its tables on first use, blocking for a while: here, as the fake starts, not in the middle of a test's run.
  countTokens("warm up");
  const cached = new Set<string>();
  const tokensOf = new Map<string, number>();
  const count = (segment: unknown) => {
    const text = JSON.stringify(segment);
    let tokens = tokensOf.get(text);
    if (tokens === undefined) tokensOf.set(text, (tokens = countInPieces(text)));
    return tokens;
  };

  /** Each segment's cumulative tokens and prefix hash. */
  function prefixes(seed: string, segments: unknown[]) {
    const hashes: string[] = [];
    const totals: number[] = [];
    let hash = seed;
    let total = 0;
    for (const segment of segments) {
      hash = createHash("sha256").update(hash).update(JSON.stringify(segment)).digest("hex");
      total += count(segment);
      hashes.push(hash);
      totals.push(total);
    }
    return { hashes, totals };
  }

  return {
    anthropic(body: JsonObject): CountedInput {
      const { segments, breakpoints } = anthropicSegments(body);
      const { hashes, totals } = prefixes(`anthropic:${String(body.model)}`, segments);
      const total = totals.at(-1) ?? 0;
      let read = 0;
      for (const b of breakpoints) {
        for (let j = b; j >= Math.max(0, b - LOOKBACK_BLOCKS); j--) {
          if (cached.has(hashes[j]!)) {
            read = Math.max(read, totals[j]!);
            break;
          }
        }
      }
      let written = read;
      for (const b of breakpoints) {
        if (totals[b]! < MIN_CACHEABLE_TOKENS) continue;
        cached.add(hashes[b]!);
        written = Math.max(written, totals[b]!);
      }
      return { input: total - written, cacheRead: read, cacheWrite: written - read };
    },

    openai(body: JsonObject): CountedInput {
      const messages = Array.isArray(body.messages) ? body.messages : [];
      const segments = [{ tools: body.tools ?? null }, ...messages];
      const { hashes, totals } = prefixes(`openai:${String(body.model)}`, segments);
      const total = totals.at(-1) ?? 0;
      let read = 0;
      for (let j = hashes.length - 1; j >= 0; j--) {
        if (cached.has(hashes[j]!)) {
          read =
            totals[j]! >= MIN_CACHEABLE_TOKENS ? Math.floor(totals[j]! / OPENAI_CACHE_STEP) * OPENAI_CACHE_STEP : 0;
          break;
        }
      }
      if (total >= MIN_CACHEABLE_TOKENS) for (const hash of hashes) cached.add(hash);
      return { input: total - read, cacheRead: read, cacheWrite: 0 };
    },

    reset(): void {
      cached.clear();
    },
  };
}

export type PromptCache = ReturnType<typeof createPromptCache>;

/** The request as the cache sees it: tools, then system blocks, then message blocks; and which of them carry a breakpoint. */
function anthropicSegments(body: JsonObject): { segments: unknown[]; breakpoints: number[] } {
  const segments: unknown[] = [];
  const breakpoints: number[] = [];
  const add = (block: unknown) => {
    if (isJsonObject(block) && block.cache_control !== undefined && block.cache_control !== null) {
      const { cache_control: _, ...rest } = block;
      breakpoints.push(segments.length);
      segments.push(rest);
    } else {
      segments.push(block);
    }
  };
  for (const tool of Array.isArray(body.tools) ? body.tools : []) add(tool);
  if (typeof body.system === "string") add({ type: "text", text: body.system });
  else if (Array.isArray(body.system)) body.system.forEach(add);
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isJsonObject(message)) continue;
    // A turn's role is part of what is cached: it goes with its first block.
    const blocks =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : Array.isArray(message.content)
          ? message.content
          : [];
    blocks.forEach((block, i) => add(i === 0 && isJsonObject(block) ? { role: message.role, ...block } : block));
  }
  return { segments, breakpoints };
}

/**
 * The Messages API's checks of `cache_control`, with its error messages:
 * at most four breakpoints, each `{"type": "ephemeral"}` (with an optional
 * `ttl` of 5m or 1h), never on an empty text block.
 */
export function checkCacheControl(body: JsonObject): string | null {
  let found = 0;
  const check = (block: unknown, where: string): string | null => {
    if (!isJsonObject(block) || block.cache_control === undefined || block.cache_control === null) return null;
    found++;
    const control = block.cache_control;
    if (!isJsonObject(control) || control.type !== "ephemeral")
      return `${where}.cache_control.type: Input should be 'ephemeral'`;
    if (control.ttl !== undefined && control.ttl !== "5m" && control.ttl !== "1h")
      return `${where}.cache_control.ttl: Input should be '5m' or '1h'`;
    if (block.type === "text" && block.text === "")
      return `${where}: cache_control cannot be set for empty text blocks`;
    return null;
  };
  const problems: (string | null)[] = [];
  (Array.isArray(body.tools) ? body.tools : []).forEach((tool, i) => problems.push(check(tool, `tools.${i}`)));
  if (Array.isArray(body.system)) body.system.forEach((block, i) => problems.push(check(block, `system.${i}`)));
  (Array.isArray(body.messages) ? body.messages : []).forEach((message, n) => {
    if (isJsonObject(message) && Array.isArray(message.content))
      message.content.forEach((block, m) => problems.push(check(block, `messages.${n}.content.${m}`)));
  });
  const problem = problems.find((p) => p !== null);
  if (problem) return problem;
  if (found > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${found}.`;
  return null;
}
