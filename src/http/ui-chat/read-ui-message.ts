import type { PendingToolCall } from "../../core/run-outcome.js";
import type { UserInputBlock } from "../../core/attachment-input.js";
import type { ApprovalAnswer, OutputAnswer } from "../../conversations/check-action-answer.js";
import { AppError } from "../../errors.js";
import type { UiChatBody } from "./ui-chat-schemas.js";
import { blockOfFilePart } from "./ui-file-part.js";

/** What the last message of a chat request asks: a run for a user message, or the answers to a paused run's calls. */
export type UiRequest =
  | {
      kind: "send";
      content: UserInputBlock[];
      /** The request's field each block came from (`body.messages[i].parts[j]`). */
      fieldOf: (index: number) => string;
      /** The request's field of the message's parts (`body.messages[i].parts`). */
      partsField: string;
    }
  | { kind: "answer"; approvals: ApprovalAnswer[]; toolOutputs: OutputAnswer[] }
  | { kind: "refused"; reason: string };

export const APPEND_ONLY =
  "loopd keeps the history append-only: a message cannot be regenerated or edited. Send a new message, or fork the conversation at an earlier message to try another way.";

type UiPart = UiChatBody["messages"][number]["parts"][number];

/**
 * Reads the request the way loopd keeps the history: only the last message
 * counts (or the assistant message `messageId` names, where a tool approval
 * was answered). A regenerate or an edit of a sent message is refused.
 */
export function readUiRequest(body: UiChatBody): UiRequest {
  if (body.trigger === "regenerate-message") return { kind: "refused", reason: APPEND_ONLY };
  const last = body.messages.at(-1)!;
  const named = body.messageId === undefined ? undefined : body.messages.find((m) => m.id === body.messageId);
  if (last.role === "user") {
    if (named?.role === "user") return { kind: "refused", reason: APPEND_ONLY };
    return userContentOf(last.parts, `body.messages[${body.messages.length - 1}]`);
  }
  if (last.role !== "assistant")
    throw new AppError("invalid_request", "the last message must be the user's, or the assistant's with tool answers", {
      field: "body.messages",
    });
  const answered = named?.role === "assistant" ? named : last;
  return { kind: "answer", ...answersIn(answered.parts) };
}

/** A user message's text parts and file parts (see `blockOfFilePart`) as the blocks of a message to send; other parts are not read. */
function userContentOf(parts: UiPart[], field: string): Extract<UiRequest, { kind: "send" }> {
  const content: UserInputBlock[] = [];
  const fields: string[] = [];
  for (const [j, part] of parts.entries()) {
    const block =
      part.type === "text"
        ? typeof part.text === "string" && part.text.trim() !== ""
          ? { type: "text" as const, text: part.text }
          : undefined
        : part.type === "file"
          ? blockOfFilePart(part, `${field}.parts[${j}]`)
          : undefined;
    if (!block) continue;
    content.push(block);
    fields.push(`${field}.parts[${j}]`);
  }
  if (content.length === 0) {
    throw new AppError(
      "invalid_request",
      "the last message holds no text and no file: a user message needs a non-empty text part or a file part",
      { field: "body.messages" },
    );
  }
  return { kind: "send", content, fieldOf: (index) => fields[index]!, partsField: `${field}.parts` };
}

/** Approval responses (`addToolApprovalResponse`) and client tools' outputs (`addToolOutput`) in an assistant message's tool parts. */
function answersIn(parts: UiPart[]): { approvals: ApprovalAnswer[]; toolOutputs: OutputAnswer[] } {
  const approvals: ApprovalAnswer[] = [];
  const toolOutputs: OutputAnswer[] = [];
  for (const part of parts) {
    if (typeof part.toolCallId !== "string") continue;
    const approval = part.approval as { approved?: unknown; reason?: unknown } | undefined;
    if (part.state === "approval-responded" && typeof approval?.approved === "boolean") {
      approvals.push({
        tool_call_id: part.toolCallId,
        approve: approval.approved,
        ...(typeof approval.reason === "string" && { reason: approval.reason }),
      });
    } else if (part.state === "output-available" && !approval) {
      toolOutputs.push({
        tool_call_id: part.toolCallId,
        output: typeof part.output === "string" ? part.output : JSON.stringify(part.output ?? null),
        is_error: false,
      });
    } else if (part.state === "output-error" && !approval && typeof part.errorText === "string") {
      toolOutputs.push({ tool_call_id: part.toolCallId, output: part.errorText, is_error: true });
    }
  }
  return { approvals, toolOutputs };
}

/** The answers meant for the calls the run waits on: parts of calls already settled (server tools' results) are not answers. */
export function answersFor(pending: readonly PendingToolCall[], request: Extract<UiRequest, { kind: "answer" }>) {
  const waiting = new Set(pending.map((c) => c.tool_call_id));
  return {
    approvals: request.approvals.filter((a) => waiting.has(a.tool_call_id)),
    toolOutputs: request.toolOutputs.filter((o) => waiting.has(o.tool_call_id)),
  };
}
