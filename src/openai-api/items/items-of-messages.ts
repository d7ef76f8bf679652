import type { Message, ToolCallBlock, ToolResultBlock, UserBlock } from "../../core/messages.js";
import type { PendingToolCall } from "../../core/run-outcome.js";
import { FINISH_TOOL } from "../../core/run-settings.js";
import { reasonOfDenial } from "../../conversations/answer-action.js";
import {
  itemIds,
  SERVER_LABEL,
  type InputFile,
  type InputImage,
  type FunctionCallItem,
  type InputText,
  type Item,
  type McpApprovalRequestItem,
  type McpCallItem,
  type OutputText,
} from "./openai-items.js";

export interface ItemsOptions {
  /** The client's tools (the request's function tools): their calls are `function_call` items, their results `function_call_output`. */
  clientTools: ReadonlySet<string>;
  /** The calls a paused run waits on: one waiting for approval is an `mcp_approval_request`. */
  pending?: readonly PendingToolCall[] | undefined;
  /**
   * `output`: what the model and the server's tools produced (a response's
   * `output`); `all`: the user's messages and the client's outputs too (a
   * conversation's items, a response's input items).
   */
  include: "output" | "all";
  /** Calls made before these messages whose results are among them (a paused run's, answered): shown where their results come. */
  earlierCalls?: readonly ToolCallBlock[] | undefined;
  /** Where an attachment is read (`input_image.image_url` of a stored image); null: not shown. */
  attachmentUrl?: ((attachmentId: string) => string) | undefined;
}

export const outputText = (text: string): OutputText => ({ type: "output_text", text, annotations: [], logprobs: [] });

/** What the `finish` call said, as the answer's text: its result as JSON when it has one, else its summary. */
export function finishText(input: Record<string, unknown>): string {
  if (input.result !== undefined) return JSON.stringify(input.result);
  return typeof input.summary === "string" ? input.summary : "";
}

/**
 * loopd's history as OpenAI items. An assistant message's text is one
 * `message` item; each of its calls is a `function_call` (a client tool), an
 * `mcp_call` (a tool the server runs, with its result as `output` or
 * `error`), or an `mcp_approval_request` (a call waiting for a person's
 * yes). A `finish` call is the answer's text. Messages loopd wrote itself
 * (notices, summaries) and refused turns are left out.
 */
export function itemsOfMessages(messages: readonly Message[], options: ItemsOptions): Item[] {
  const results = new Map<string, ToolResultBlock>();
  for (const m of messages) if (m.role === "tool") results.set(m.content[0].tool_call_id, m.content[0]);
  const approvals = new Set((options.pending ?? []).filter((c) => c.action === "approve").map((c) => c.tool_call_id));
  const items: Item[] = [];
  for (const message of messages) {
    if (message.excluded) continue;
    if (message.role === "user") {
      if (options.include === "all" && message.kind === undefined) items.push(userItem(message, options));
      continue;
    }
    if (message.role === "tool") {
      const [result] = message.content;
      const earlier = options.earlierCalls?.find((c) => c.id === result.tool_call_id);
      if (earlier && !options.clientTools.has(earlier.name) && !isDenial(result))
        items.push(callItem(earlier, { results, approvals: new Set(), clientTools: options.clientTools }));
      else if (options.include === "all") items.push(...answerItems(result, options));
      continue;
    }
    const text = message.content.flatMap((b) => (b.type === "text" && b.text !== "" ? [b.text] : [])).join("");
    const finish = message.content.find((b): b is ToolCallBlock => b.type === "tool_call" && b.name === FINISH_TOOL);
    const said = finish ? finishText(finish.input) : text;
    if (said !== "")
      items.push({
        type: "message",
        id: message.run_id === null ? itemIds.message(message.id) : itemIds.answer(message.run_id, message.seq),
        status: "completed",
        role: "assistant",
        content: [outputText(said)],
      });
    for (const block of message.content) {
      if (block.type !== "tool_call" || block.name === FINISH_TOOL) continue;
      items.push(callItem(block, { results, approvals, clientTools: options.clientTools }));
    }
  }
  return items;
}

const argumentsOf = (call: ToolCallBlock) => call.raw_arguments ?? JSON.stringify(call.input);

export function callItem(
  call: ToolCallBlock,
  {
    results,
    approvals,
    clientTools,
  }: { results: Map<string, ToolResultBlock>; approvals: Set<string>; clientTools: ReadonlySet<string> },
): FunctionCallItem | McpApprovalRequestItem | McpCallItem {
  const args = argumentsOf(call);
  if (clientTools.has(call.name))
    return {
      type: "function_call",
      id: itemIds.functionCall(call.id),
      call_id: call.id,
      name: call.name,
      arguments: args,
      status: "completed",
    };
  if (approvals.has(call.id))
    return {
      type: "mcp_approval_request",
      id: itemIds.approvalRequest(call.id),
      server_label: SERVER_LABEL,
      name: call.name,
      arguments: args,
    };
  const result = results.get(call.id);
  return {
    type: "mcp_call",
    id: itemIds.mcpCall(call.id),
    server_label: SERVER_LABEL,
    name: call.name,
    arguments: args,
    output: result && !result.is_error ? result.content : null,
    error: result?.is_error ? result.content : null,
    status: result ? "completed" : "in_progress",
  };
}

const isDenial = (result: ToolResultBlock) => result.is_error && reasonOfDenial(result.content) !== undefined;

/** What a tool result shows among a conversation's items: a client's output, or a person's denial. */
function answerItems(result: ToolResultBlock, { clientTools }: ItemsOptions): Item[] {
  if (clientTools.has(result.name))
    return [
      {
        type: "function_call_output",
        id: itemIds.functionCallOutput(result.tool_call_id),
        call_id: result.tool_call_id,
        output: result.content,
        status: "completed",
      },
    ];
  const reason = result.is_error ? reasonOfDenial(result.content) : undefined;
  if (reason === undefined) return [];
  return [
    {
      type: "mcp_approval_response",
      id: itemIds.approvalResponse(result.tool_call_id),
      approval_request_id: itemIds.approvalRequest(result.tool_call_id),
      approve: false,
      reason: reason === "" ? null : reason,
    },
  ];
}

function userItem(message: Message & { role: "user" }, options: ItemsOptions): Item {
  return {
    type: "message",
    id: itemIds.message(message.id),
    status: "completed",
    role: "user",
    content: message.content.map((block) => userPart(block, options)),
  };
}

function userPart(block: UserBlock, { attachmentUrl }: ItemsOptions): InputText | InputImage | InputFile {
  switch (block.type) {
    case "text":
      return { type: "input_text", text: block.text };
    case "image":
      return {
        type: "input_image",
        image_url: "source" in block ? block.source.url : (attachmentUrl?.(block.attachment_id) ?? null),
        detail: "auto",
      };
    case "document": {
      const url = attachmentUrl?.(block.attachment_id);
      return {
        type: "input_file",
        ...(block.title !== undefined && { filename: block.title }),
        ...(url !== undefined && { file_url: url }),
      };
    }
  }
}
