import { toolCallsOf, type NewMessage, type ToolCallBlock } from "./messages.js";

export const INTERRUPTED_RESULT =
  "tool execution was interrupted (the server stopped): it may or may not have taken effect; check before calling it again";
export const CANCELLED_RESULT = "tool call was cancelled before it finished; its result is unknown";
/** A call cut short because the user sent a new message (`on_busy: "interrupt"`). */
export const SUPERSEDED_CALL_RESULT = "cancelled: the user sent a new message";

/** The tool calls of the history that have no tool message answering them. */
export function findOrphanToolCalls(history: readonly NewMessage[]): ToolCallBlock[] {
  const answered = new Set<string>();
  for (const m of history) if (m.role === "tool") answered.add(m.content[0].tool_call_id);
  return history.flatMap((m) => toolCallsOf(m)).filter((call) => !answered.has(call.id));
}

export function errorResultFor(call: ToolCallBlock, content: string): NewMessage {
  return {
    role: "tool",
    content: [{ type: "tool_result", tool_call_id: call.id, name: call.name, content, is_error: true }],
  };
}

/**
 * `repairMessages` of the history's tail: since every model call is preceded
 * by a repair, an unanswered call can only be in the last assistant message
 * or after it, so only that much is looked at, whatever the history's length.
 */
export function repairTail(history: readonly NewMessage[], content = INTERRUPTED_RESULT): NewMessage[] {
  let start = history.length;
  while (start > 0 && history[start - 1]!.role !== "assistant") start--;
  return repairMessages(history.slice(Math.max(0, start - 1)), content);
}

/**
 * Tool messages that make the history valid again after a crash or a cancel:
 * one error result per unanswered tool call, so no provider ever receives an
 * orphan tool call (which both answer with a 400).
 */
export function repairMessages(history: readonly NewMessage[], content = INTERRUPTED_RESULT): NewMessage[] {
  return findOrphanToolCalls(history).map((call) => errorResultFor(call, content));
}
