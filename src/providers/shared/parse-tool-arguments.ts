import type { ToolCallBlock } from "../../core/messages.js";

/**
 * Tool-call arguments as the model streamed them (a JSON string) → the
 * canonical `input`. Models do send broken JSON (cut off by `max_tokens`, or
 * plain prose); that is the model's mistake, not an infrastructure fault, so
 * it never throws: the call keeps `input: {}` and the text in `raw_arguments`,
 * and the tool executor tells the model what was wrong.
 */
export function parseToolArguments(raw: string): Pick<ToolCallBlock, "input" | "raw_arguments"> {
  // An empty string is how several servers say "no arguments".
  if (raw.trim() === "") return { input: {} };
  try {
    const parsed: unknown = JSON.parse(raw);
    if (isPlainObject(parsed)) return { input: parsed };
  } catch {
    // fall through: keep the raw text
  }
  return { input: {}, raw_arguments: raw };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
