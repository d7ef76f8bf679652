import type { NewRunSpan } from "../../store/save-run-step.js";
import type { UserBlock } from "../../core/messages.js";
import type { MessageRow } from "../../store/schema.js";
import { noticeText } from "./run-tracer.js";

/*
 * A span that tells a message (a model call, its answer; a tool call, its
 * result; a notice) is saved as that message's `span` column rather than a
 * row of `run_spans`: no tuple and no index entry of its own. It keeps only
 * what the row does not hold: its type is the message's role, and the
 * message's seq, its content (a result's call id, tool name and error flag,
 * a notice's text) and, for a model call, the history it was built from
 * (every message before its answer) are read back from the row. A model
 * call's values are kept in their shortest form (jsonb stores every key of
 * every value): its start as epoch milliseconds, the body's sha256 in
 * base64url, usage as `[input, output, cache read, cache write]`, the raw
 * stop reason only when it differs from loopd's.
 */

type Data = Record<string, unknown>;
type Usage = { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_write_tokens: number };

/** The role of the message each kind of span tells. */
const ROLE_TOLD: Record<string, MessageRow["role"]> = {
  "model.call": "assistant",
  "tool.call": "tool",
  notice: "user",
};

/** Whether `span` tells `message` (the one at its `messageSeq`, of the role its type tells): then it is saved as the message's `span`. */
export const tellsMessage = (span: NewRunSpan, message: { role: MessageRow["role"] } | undefined) =>
  span.messageSeq !== undefined && message !== undefined && ROLE_TOLD[span.type] === message.role;

/** What a message's `span` column keeps of the span that tells it. */
export function messageSpanData({ type, data }: NewRunSpan): Data {
  switch (type) {
    case "model.call": {
      const { request, response, started_at, ...rest } = data as { request: Data; response: Data; started_at: string };
      const { history_length: _history, body_sha256, ...record } = request;
      const { message_seq: _seq, usage, raw_stop_reason, ...answer } = response as Data & { usage: Usage };
      return {
        ...rest,
        started_at: Date.parse(started_at),
        request: {
          ...record,
          body_sha256:
            typeof body_sha256 === "string" ? Buffer.from(body_sha256, "hex").toString("base64url") : body_sha256,
        },
        response: {
          ...answer,
          usage: [usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens],
          ...(raw_stop_reason !== answer.stop_reason && { raw_stop_reason }),
        },
      };
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
export function spanOfMessage(row: Pick<MessageRow, "seq" | "role" | "content"> & { span: Data }): {
  type: string;
  data: Data;
} {
  const { seq, span } = row;
  const content = row.content as MessageRow["content"];
  switch (row.role) {
    case "assistant": {
      const { request, response, started_at } = span as { request: Data; response: Data; started_at: number };
      const { body_sha256, ...record } = request;
      const { usage, raw_stop_reason, ...answer } = response as Data & { usage: [number, number, number, number] };
      const [input_tokens, output_tokens, cache_read_tokens, cache_write_tokens] = usage;
      return {
        type: "model.call",
        data: {
          ...span,
          started_at: new Date(started_at).toISOString(),
          request: {
            history_length: seq - 1,
            ...record,
            body_sha256:
              typeof body_sha256 === "string" ? Buffer.from(body_sha256, "base64url").toString("hex") : body_sha256,
          },
          response: {
            message_seq: seq,
            ...answer,
            raw_stop_reason: raw_stop_reason === undefined ? answer.stop_reason : raw_stop_reason,
            usage: { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens },
          },
        },
      };
    }
    case "tool": {
      const [result] = content as [{ tool_call_id: string; name: string; is_error: boolean }];
      return {
        type: "tool.call",
        data: {
          tool_call_id: result.tool_call_id,
          name: result.name,
          is_error: result.is_error,
          ...span,
          result_seq: seq,
        },
      };
    }
    case "user":
      return { type: "notice", data: { message_seq: seq, text: noticeText(content as UserBlock[]) } };
  }
}
