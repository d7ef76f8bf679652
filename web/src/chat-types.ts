import { isToolUIPart, type UIMessage } from "ai";
import type { Run, Usage } from "./api.ts";

/** What loopd puts in a UI message's metadata: the run it is the answer of (`start`), and how it ended (`finish`). */
export interface RunMetadata {
  run_id: string;
  status?: Run["status"];
  stop_reason?: string | null;
  usage?: Usage;
}

/** loopd's own data part: a notice it wrote into the history (a grace turn, a finish nudge). */
export type ChatMessage = UIMessage<RunMetadata, { notice: { text: string } }>;
export type ChatPart = ChatMessage["parts"][number];
export type ToolPart = Extract<ChatPart, { toolCallId: string }>;

/** Approve or deny a call, or answer a client tool's call: the chat sends the answers once none is left open. */
export interface Answers {
  approve(approvalId: string, approved: boolean, reason?: string): void;
  output(tool: string, toolCallId: string, output: string, isError: boolean): void;
}

const OPEN_STATES = new Set(["approval-requested", "input-streaming", "input-available"]);

/**
 * When to send the answers of a paused run: its message says the run waits
 * (`requires_action`) and no call of it is left without an answer. Only a
 * paused run's message qualifies: a finished run's calls all have results too.
 */
export function answeredAll({ messages }: { messages: ChatMessage[] }): boolean {
  const last = messages.at(-1);
  if (last?.role !== "assistant" || last.metadata?.status !== "requires_action") return false;
  const tools = last.parts.filter(isToolUIPart);
  return tools.length > 0 && !tools.some((p) => OPEN_STATES.has(p.state));
}
