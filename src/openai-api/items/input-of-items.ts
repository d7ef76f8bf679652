import type { UserInputBlock } from "../../core/attachment-input.js";
import { blockOfPart, invalidItem as invalid, type InputPart } from "./block-of-part.js";
import type { ApprovalAnswer, OutputAnswer } from "../../conversations/check-action-answer.js";
import { callIdOfApprovalRequest, callIdOfMcpCall } from "./openai-items.js";
import type { ConversationInputItem } from "../conversations/messages-of-items.js";

/** An input item as a client sends it (the spec's `ItemParam`, and OpenAI's `mcp_approval_request` and `mcp_approval_response`). */
export type InputItem =
  | {
      type?: "message" | undefined;
      role: "user" | "system" | "developer" | "assistant";
      content: string | InputPart[];
    }
  | { type: "function_call_output"; call_id: string; output: string | InputPart[] }
  | { type: "mcp_approval_response"; approval_request_id: string; approve: boolean; reason?: string | null | undefined }
  | { type: "mcp_approval_request"; id: string }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "item_reference"; id: string }
  | { type: "reasoning" }
  | {
      type: "mcp_call";
      id: string;
      name: string;
      arguments: string;
      output?: string | null | undefined;
      error?: string | null | undefined;
    };

/** What a request's `input` asks of a run: a user message, answers to a paused run's calls, instructions besides the request's, a history before them. */
export interface ResponseInput {
  /** The user's message (empty: none). */
  content: UserInputBlock[];
  toolOutputs: OutputAnswer[];
  approvals: ApprovalAnswer[];
  /** The text of `system` and `developer` messages, in order. */
  instructions: string[];
  /**
   * The conversation a client sends back itself (it keeps its own history,
   * or answers without `previous_response_id`): every item but the last user
   * messages (`content`), to be appended before the run; null when `input`
   * holds no assistant message, function call or reasoning item (unless
   * asked for: `asHistory`).
   */
  history: HistoryInput | null;
}

/** A client's history: its items as a conversation takes them, and the request's name of each (`input[3]`). */
export interface HistoryInput {
  items: ConversationInputItem[];
  params: string[];
}

/**
 * A request's `input` as loopd's words. A string is a user message; items
 * are user messages (text, images, files: their parts make one message),
 * `system`/`developer` messages (instructions for this response),
 * `function_call_output` and `mcp_approval_response` (answers to the calls
 * the previous response ended with). Input with assistant messages,
 * `function_call` or `reasoning` items is a history the client keeps
 * itself (see `historyOf`), as is any input with `asHistory` (function
 * outputs with no paused run to answer). `param` names an item: `input[2].content[0]`.
 */
export function inputOfItems(
  input: string | InputItem[],
  { asHistory = false }: { asHistory?: boolean } = {},
): ResponseInput {
  const out: ResponseInput = { content: [], toolOutputs: [], approvals: [], instructions: [], history: null };
  if (typeof input === "string") {
    out.content.push({ type: "text", text: input });
    return out;
  }
  if (asHistory || input.some(isHistory)) return historyOf(input, out);
  input.forEach((item, i) => {
    const param = `input[${i}]`;
    switch (item.type) {
      case "function_call_output":
        out.toolOutputs.push({ tool_call_id: item.call_id, output: outputString(item.output), is_error: false });
        return;
      case "mcp_approval_response": {
        const callId = callIdOfApprovalRequest(item.approval_request_id);
        if (callId === null)
          throw invalid(`${param}.approval_request_id`, "is not the id of an mcp_approval_request item (mcpr_…)");
        out.approvals.push({ tool_call_id: callId, approve: item.approve, reason: item.reason ?? undefined });
        return;
      }
      case "item_reference":
        throw unreferenced(param);
      case "mcp_approval_request":
        // Sent back with its answer, as a client keeping the output does: the answer is what counts.
        if (input.some((other) => other.type === "mcp_approval_response" && other.approval_request_id === item.id))
          return;
        throw invalid(
          `${param}.type`,
          "an mcp_approval_request is the server's question: answer it with an mcp_approval_response (approval_request_id: its id) and previous_response_id of the response that asked",
        );
      case "function_call":
      case "mcp_call":
      case "reasoning":
        return; // not in input: isHistory
      default:
        if (!instruction(item, param, out)) userParts(item, param, out);
    }
  });
  return out;
}

const isHistory = (item: InputItem) =>
  item.type === "function_call" ||
  item.type === "mcp_call" ||
  item.type === "reasoning" ||
  ("role" in item && item.role === "assistant");

type MessageInput = Extract<InputItem, { role: string }>;
const isUser = (item: InputItem): item is MessageInput => "role" in item && item.role === "user";
const partsOf = (item: MessageInput) =>
  typeof item.content === "string" ? [{ type: "input_text" as const, text: item.content }] : item.content;

/**
 * A client's own history: its last user messages are the run's message;
 * every item before them is history (system and developer messages are this
 * response's instructions wherever they stand; an `mcp_call` is the call of
 * a server tool and its result; reasoning items are left out,
 * as what one provider reasoned is not another's to read). Whether it is a
 * history a model takes is checked against the conversation's end when it
 * is appended (`messagesOfItems`).
 */
function historyOf(input: InputItem[], out: ResponseInput): ResponseInput {
  let end = input.length;
  while (end > 0 && isUser(input[end - 1]!)) end--;
  const history: HistoryInput = { items: [], params: [] };
  input.forEach((item, i) => {
    const param = `input[${i}]`;
    switch (item.type) {
      case "reasoning":
        return;
      case "item_reference":
        throw unreferenced(param);
      case "mcp_approval_response":
      case "mcp_approval_request":
        throw invalid(
          `${param}.type`,
          `an ${item.type} belongs to a paused response, not to a history you keep: answer the request with an mcp_approval_response and previous_response_id of the response that asked, sending that answer (and, if you like, the request it answers) but not the rest of that response's output, which loopd keeps`,
        );
      case "function_call":
      case "function_call_output":
        history.items.push(item);
        history.params.push(param);
        return;
      case "mcp_call":
        history.items.push(...serverCall(item, param));
        history.params.push(param, param);
        return;
      default:
        if (instruction(item, param, out)) return;
        if (i >= end) return userParts(item, param, out);
        history.items.push(item);
        history.params.push(param);
    }
  });
  out.history = history;
  return out;
}

/** A server tool's call as a response showed it (`mcp_call`, id `mcp_<call id>`): the call and its result. */
function serverCall(item: InputItem & { type: "mcp_call" }, param: string): ConversationInputItem[] {
  const callId = callIdOfMcpCall(item.id);
  if (callId === null) throw invalid(`${param}.id`, "is not the id of an mcp_call item a response showed (mcp_…)");
  if (item.output == null && item.error == null)
    throw invalid(param, "an mcp_call sent back needs its output or its error (a finished call)");
  return [
    { type: "function_call", call_id: callId, name: item.name, arguments: item.arguments },
    {
      type: "function_call_output",
      call_id: callId,
      output: item.error ?? item.output ?? "",
      is_error: item.error != null,
    },
  ];
}

/** A system or developer message's text, as this response's instructions; false for any other message. */
function instruction(item: MessageInput, param: string, out: ResponseInput): boolean {
  if (item.role !== "system" && item.role !== "developer") return false;
  out.instructions.push(
    partsOf(item)
      .map((p, j) => (p.type === "input_text" ? p.text : refuse(`${param}.content[${j}]`)))
      .join("\n"),
  );
  return true;
}

function userParts(item: MessageInput, param: string, out: ResponseInput): void {
  partsOf(item).forEach((part, j) => out.content.push(blockOfPart(part, `${param}.content[${j}]`)));
}

const unreferenced = (param: string) =>
  invalid(
    `${param}.type`,
    "item_reference items are not taken: send the item itself, or continue with previous_response_id or conversation",
  );

const refuse = (param: string): never => {
  throw invalid(param, "instructions (system and developer messages) take text only");
};

const outputString = (output: string | InputPart[]) =>
  typeof output === "string" ? output : output.map((p) => ("text" in p ? p.text : "")).join("");
