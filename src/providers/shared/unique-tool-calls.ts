import type { AssistantBlock } from "../../core/messages.js";

/**
 * An answer's blocks with each tool call id once: a misbehaving
 * OpenAI-compatible server may send two calls under one id, which would run
 * a call twice and leave two results for one id (a history both APIs
 * refuse). The first call with an id is kept.
 */
export function uniqueToolCalls(content: AssistantBlock[]): AssistantBlock[] {
  const seen = new Set<string>();
  const unique = content.filter((b) => b.type !== "tool_call" || (!seen.has(b.id) && seen.add(b.id)));
  return unique.length === content.length ? content : unique;
}
