/**
 * The items of OpenAI's Responses and Conversations APIs as loopd shows them
 * (the open Open Responses specification's `ItemField`, with OpenAI's
 * remote-MCP items for the tools the server runs). Plain types: no SDK.
 */

/** Where a server tool's calls say they come from: loopd itself, not the client. */
export const SERVER_LABEL = "loopd";

export interface OutputText {
  type: "output_text";
  text: string;
  annotations: never[];
  logprobs: never[];
}

export interface InputText {
  type: "input_text";
  text: string;
}

export interface InputImage {
  type: "input_image";
  image_url: string | null;
  detail: "auto";
}

export interface InputFile {
  type: "input_file";
  filename?: string;
  file_url?: string;
}

export type ItemStatus = "in_progress" | "completed" | "incomplete";

export interface MessageItem {
  type: "message";
  id: string;
  status: ItemStatus;
  role: "user" | "assistant" | "system" | "developer";
  content: (OutputText | InputText | InputImage | InputFile)[];
}

export interface FunctionCallItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

export interface FunctionCallOutputItem {
  type: "function_call_output";
  id: string;
  call_id: string;
  output: string;
  status: ItemStatus;
}

/** A call of a tool that runs on the server (an agent's, loopd's built-ins, MCP servers' behind loopd). */
export interface McpCallItem {
  type: "mcp_call";
  id: string;
  server_label: typeof SERVER_LABEL;
  name: string;
  arguments: string;
  output: string | null;
  error: string | null;
  status: ItemStatus;
}

/** A server tool's call that waits for a person's yes; answered by an `mcp_approval_response` input item. */
export interface McpApprovalRequestItem {
  type: "mcp_approval_request";
  id: string;
  server_label: typeof SERVER_LABEL;
  name: string;
  arguments: string;
}

/** The answer to an approval request, as a client sends it and as the history shows it. */
export interface McpApprovalResponseItem {
  type: "mcp_approval_response";
  id: string;
  approval_request_id: string;
  approve: boolean;
  reason: string | null;
}

export type OutputItem = MessageItem | FunctionCallItem | McpCallItem | McpApprovalRequestItem;
export type Item = OutputItem | FunctionCallOutputItem | McpApprovalResponseItem;

/**
 * Item ids are worked out from loopd's ids, never stored: a user message's
 * item is the message's own id (`msg_…`), a run's answer `msg_<run id>_<seq>` (known
 * before the message is saved, so a stream names it as its text comes), a
 * call's items carry the provider's call id: the same history always shows
 * the same items, and an answer names its call.
 */
export const itemIds = {
  message: (messageId: string) => messageId,
  answer: (runId: string, seq: number) => `msg_${runId.replace(/^run_/, "")}_${seq}`,
  functionCall: (callId: string) => `fc_${callId}`,
  functionCallOutput: (callId: string) => `fco_${callId}`,
  mcpCall: (callId: string) => `mcp_${callId}`,
  approvalRequest: (callId: string) => `mcpr_${callId}`,
  approvalResponse: (callId: string) => `mcpa_${callId}`,
};

/** The tool call an approval request's id names (`mcpr_<call id>`); null when it is not one. */
export const callIdOfApprovalRequest = (itemId: string): string | null =>
  itemId.startsWith("mcpr_") ? itemId.slice("mcpr_".length) : null;

/** The tool call an `mcp_call` item's id names (`mcp_<call id>`); null when it is not one. */
export const callIdOfMcpCall = (itemId: string): string | null =>
  itemId.startsWith("mcp_") ? itemId.slice("mcp_".length) : null;
