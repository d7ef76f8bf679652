import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { textOf } from "../core/messages.js";
import type { PendingCall, RunRow } from "../store/schema.js";
import type { McpServerDeps } from "./mcp-server-deps.js";

/** Where a call's run is: in every result, so the caller can continue the conversation or read the run. */
const metaOf = (run: RunRow) => ({ loopd: { conversation_id: run.conversationId, run_id: run.id } });

const runPath = (run: RunRow) => `/conversations/${run.conversationId}/runs/${run.id}`;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A run that ended: its last assistant text; completed, with the finish
 * tool's `result` as `structuredContent` when it ran with a finish schema;
 * otherwise an error result saying how it ended.
 */
export async function endedResult(
  { conversations }: Pick<McpServerDeps, "conversations">,
  run: RunRow,
): Promise<CallToolResult> {
  const messages = await conversations.messagesOfRun(run);
  const text =
    messages
      .filter((m) => m.role === "assistant")
      .map(textOf)
      .filter(Boolean)
      .at(-1) ?? "";
  if (run.status === "completed") {
    // The finish tool's `result` when the run had a schema for it (MCP's structured content is an object).
    const result = run.result?.result;
    const structured = run.request.finish?.result_schema && isObject(result) ? result : undefined;
    const answer = text || run.result?.summary || (structured ? JSON.stringify(structured) : "");
    return {
      content: [{ type: "text", text: answer }],
      ...(structured && { structuredContent: structured }),
      _meta: metaOf(run),
    };
  }
  const how = `run ${run.id} of conversation ${run.conversationId} ended ${run.status}${run.stopReason ? ` (${run.stopReason})` : ""}${run.error ? `: ${run.error.message}` : ""}`;
  return {
    content: [{ type: "text", text: text ? `${how}\n\n${text}` : how }],
    isError: true,
    _meta: metaOf(run),
  };
}

/** A run paused for calls this client cannot answer here: which, and the route that answers them. */
export function pausedResult(run: RunRow): CallToolResult {
  const calls = run.requiredAction?.tool_calls ?? [];
  const listed = calls.map(
    (c) => `${c.name} (${c.action === "approve" ? "approval" : "output"}, tool_call_id ${c.tool_call_id})`,
  );
  const text =
    `run ${run.id} of conversation ${run.conversationId} is paused, waiting for ${listed.join(", ")}` +
    `${run.requiredAction ? ` until ${run.requiredAction.expires_at}` : ""}. ` +
    `Answer it with POST ${runPath(run)}/actions ({"approvals": [{"tool_call_id": "…", "approve": true}]} or {"tool_outputs": [{"tool_call_id": "…", "output": …}]}); ` +
    `then read the answer with get_conversation.`;
  return { content: [{ type: "text", text }], isError: true, _meta: metaOf(run) };
}

/** The server is stopping while the run goes on: it carries on (this process's successor takes it over), and where to read it. */
export function stoppingResult(run: RunRow): CallToolResult {
  const text =
    `loopd is restarting; run ${run.id} of conversation ${run.conversationId} goes on without this call. ` +
    `Read its answer with get_conversation ({"conversation_id": "${run.conversationId}"}) or GET ${runPath(run)}.`;
  return { content: [{ type: "text", text }], isError: true, _meta: metaOf(run) };
}

/** The most of a call's input an approval question shows (a dialog, read by a person). */
const SHOWN_INPUT = 2000;

/**
 * The question an approval is asked with: the call and its input, and when
 * the input is longer than a dialog shows, that it is cut, its length, and
 * where to read it whole (what a model wrote past the cut is decided on too).
 */
export function approvalQuestion(agent: string, call: PendingCall, run: RunRow): string {
  const input = JSON.stringify(call.input) ?? "null";
  const shown =
    input.length <= SHOWN_INPUT
      ? input
      : `${input.slice(0, SHOWN_INPUT)}… (cut: ${input.length} characters; read it whole with GET ${runPath(run)}, required_action)`;
  return `Agent ${agent} wants to call ${call.name} with ${shown}. Accept to run it; decline to refuse it.`;
}
