import { toolCallsOf, type AssistantBlock } from "../core/messages.js";
import { jsonSha256 } from "../runs/trace/body-hash.js";

/** How a replayed answer compares with the recorded one. */
export type ReplayVerdict =
  | "same_call" // the same tools with the same inputs
  | "different_tool" // other tools called (or another number of calls)
  | "different_input" // the same tools, other inputs
  | "text_instead_of_call"
  | "call_instead_of_text"
  | "same_text"
  | "different_text";

/** Compares two answers' tool calls (names, then inputs), or their text when neither calls a tool. */
export function compareAnswers(recorded: AssistantBlock[], replayed: AssistantBlock[]): ReplayVerdict {
  const was = toolCallsOf({ role: "assistant", content: recorded });
  const now = toolCallsOf({ role: "assistant", content: replayed });
  if (was.length > 0 && now.length === 0) return "text_instead_of_call";
  if (was.length === 0 && now.length > 0) return "call_instead_of_text";
  if (was.length === 0) return textOf(recorded) === textOf(replayed) ? "same_text" : "different_text";
  if (was.length !== now.length || was.some((call, i) => call.name !== now[i]!.name)) return "different_tool";
  return was.every((call, i) => jsonSha256(call.input) === jsonSha256(now[i]!.input)) ? "same_call" : "different_input";
}

const textOf = (content: AssistantBlock[]) =>
  content
    .filter((b) => b.type === "text")
    .map((b) => b.text.trim())
    .join("\n");
