import type { NewRunSpan } from "../store/run-repository.js";
import type { MessageRow } from "../store/schema.js";
import { noticeText } from "./run-tracer.js";

/*
 * A span that tells a message (a model call, its answer; a tool call, its
 * result; a notice) is saved as that message's `span` column rather than a
 * row of `run_spans`: no tuple and no index entry of its own. It keeps only
 * what the row does not hold: its type is the message's role, and the
 * message's seq, its content (a result's call id, tool name and error flag,
 * a notice's text) and, for a model call, the history it was built from
 * (every message before its answer) are read back from the row.
 */

type Data = Record<string, unknown>;

/** The role of the message each kind of span tells. */
const ROLE_TOLD: Record<string, MessageRow["role"]> = { "model.call": "assistant", "tool.call": "tool", notice: "user" };

/** Whether `span` tells `message` (the one at its `messageSeq`, of the role its type tells): then it is saved as the message's `span`. */
export const tellsMessage = (span: NewRunSpan, message: { role: MessageRow["role"] } | undefined) => span.messageSeq !== undefined && message !== undefined && ROLE_TOLD[span.type] === message.role;

/** What a message's `span` column keeps of the span that tells it. */
export function messageSpanData({ type, data }: NewRunSpan): Data {
  switch (type) {
    case "model.call": {
      const { request, response, ...rest } = data as { request: Data; response: Data };
      const { history_length: _history, ...record } = request;
      const { message_seq: _seq, ...answer } = response;
      return { ...rest, request: record, response: answer };
    }
    case "tool.call": {
      const { tool_call_id: _id, name: _name, is_error: _error, result_seq: _seq, ...rest } = data;
      return rest;
    }
    case "notice":
      return {};
    default:
      throw new Error(`a ${type} span tells no message`);
  }
}

/** A message's span whole again: its type from the message's role, its data with what the row holds put back. */
export function spanOfMessage(row: Pick<MessageRow, "seq" | "role" | "content"> & { span: Data }): { type: string; data: Data } {
  const { seq, span } = row;
  const content = row.content as MessageRow["content"];
  switch (row.role) {
    case "assistant": {
      const { request, response } = span as { request: Data; response: Data };
      return { type: "model.call", data: { ...span, request: { history_length: seq - 1, ...request }, response: { message_seq: seq, ...response } } };
    }
    case "tool": {
      const [result] = content as [{ tool_call_id: string; name: string; is_error: boolean }];
      return { type: "tool.call", data: { tool_call_id: result.tool_call_id, name: result.name, is_error: result.is_error, ...span, result_seq: seq } };
    }
    case "user":
      return { type: "notice", data: { message_seq: seq, text: noticeText(content as { text: string }[]) } };
  }
}
