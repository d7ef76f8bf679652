import type { NewRunSpan } from "../../store/save-run-step.js";
import type { UserBlock } from "../../core/messages.js";
import type { MessageRow, MessageSpan } from "../../store/schema.js";
import { noticeText } from "./run-tracer.js";

/*
 * A span that tells a message (a model call, its answer; a tool call, its
 * result; a notice) is saved as that message's `span` column rather than a
 * row of `run_spans`: no tuple and no index entry of its own. It keeps only
 * what the row does not hold: its type is the message's role, and the
 * message's seq, its content (a result's call id, tool name and error flag,
 * a notice's text) and, for a model call, the history it was built from
 * (every message before its answer) are read back from the row.
 *
 * A model call's and a tool call's spans are stored as arrays, their values
 * in a fixed order (jsonb stores every key of every object; a span that was
 * an object of 14 keys took more bytes than the answer it tells): a start as
 * epoch milliseconds, the body's sha256 in base64url, usage as
 * `[input, output, cache read, cache write]`, and last, when there is any,
 * an object of the fields the order does not name. The array is stored as
 * its JSON text, one jsonb string: a jsonb array keeps a 4-byte entry per
 * value and every number as a numeric (a model call's span took 261 bytes
 * as an array, 184 as its text; a tool call's 51 and 41). Spans stored as
 * arrays (before 2026-12-07, issue 42's second pass) or as objects (before
 * that: the same short values under their keys, the raw stop reason only
 * when it differed from loopd's) are read as they were.
 */

type Data = Record<string, unknown>;
/** What a message's `span` column holds: the array form as its JSON text, or the array or object form of older rows. */
export type StoredSpan = MessageSpan;
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
export function messageSpanData(span: NewRunSpan): StoredSpan {
  const short = shortForm(span);
  return Array.isArray(short) ? JSON.stringify(short) : short;
}

/** A span's short form: its values in a fixed order (a model or tool call's), or an object. */
function shortForm({ type, data }: NewRunSpan): Data | unknown[] {
  switch (type) {
    case "model.call": {
      const { step, started_at, latency_ms, ttft_ms, request, response, ...top } = data as Data & {
        started_at: string;
        request: Data;
        response: Data & { usage: Usage };
      };
      const { history_length: _history, token_ratio, tool_choice, body_sha256, ...record } = request;
      const { message_seq: _seq, stop_reason, usage, model, request_id, raw_stop_reason, ...answer } = response;
      const others = {
        ...top,
        ...(Object.keys(record).length > 0 && { request: record }),
        ...(Object.keys(answer).length > 0 && { response: answer }),
      };
      return [
        step,
        Date.parse(started_at),
        latency_ms,
        ttft_ms,
        token_ratio,
        tool_choice,
        typeof body_sha256 === "string" ? Buffer.from(body_sha256, "hex").toString("base64url") : body_sha256,
        stop_reason,
        [usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens],
        model,
        request_id,
        raw_stop_reason,
        ...(Object.keys(others).length > 0 ? [others] : []),
      ].map((v) => (v === undefined ? null : v));
    }
    case "tool.call": {
      const { tool_call_id: _id, name: _name, is_error: _error, result_seq: _seq, ...rest } = data;
      const { source, status, duration_ms, tool_source, server, ...others } = rest;
      const values = [source, status, duration_ms, tool_source, server].map((v) => (v === undefined ? null : v));
      if (Object.keys(others).length > 0) return [...values, others];
      while (values.length > 1 && values.at(-1) === null) values.pop();
      return values;
    }
    case "notice":
      return {};
    default:
      throw new Error(`a ${type} span tells no message`);
  }
}

/** A message's span whole again: its type from the message's role, its data with what the row holds put back. */
export function spanOfMessage(row: Pick<MessageRow, "seq" | "role" | "content"> & { span: StoredSpan }): {
  type: string;
  data: Data;
} {
  if (typeof row.span === "string") return spanOfArray({ ...row, span: JSON.parse(row.span) as unknown[] });
  if (Array.isArray(row.span)) return spanOfArray({ ...row, span: row.span });
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

/** A span stored in its array form (see `messageSpanData`), whole again. */
function spanOfArray(row: Pick<MessageRow, "seq" | "role" | "content"> & { span: unknown[] }): {
  type: string;
  data: Data;
} {
  const { seq, span } = row;
  switch (row.role) {
    case "assistant": {
      const [step, startedAt, latency_ms, ttft_ms, token_ratio, tool_choice, body, stop_reason, usage, model] = span;
      const [request_id, raw_stop_reason, others = {}] = span.slice(10) as [unknown, unknown, Data?];
      const {
        request: record = {},
        response: answer = {},
        ...top
      } = others as Data & { request?: Data; response?: Data };
      const [input_tokens, output_tokens, cache_read_tokens, cache_write_tokens] = usage as number[];
      return {
        type: "model.call",
        data: {
          step,
          started_at: new Date(startedAt as number).toISOString(),
          latency_ms,
          ttft_ms,
          ...top,
          request: {
            history_length: seq - 1,
            token_ratio,
            tool_choice,
            ...record,
            body_sha256: typeof body === "string" ? Buffer.from(body, "base64url").toString("hex") : body,
          },
          response: {
            message_seq: seq,
            stop_reason,
            raw_stop_reason,
            usage: { input_tokens, output_tokens, cache_read_tokens, cache_write_tokens },
            model,
            request_id,
            ...answer,
          },
        },
      };
    }
    case "tool": {
      const [result] = row.content as [{ tool_call_id: string; name: string; is_error: boolean }];
      const [source, status, duration_ms, tool_source, server, others = {}] = span;
      const given = (key: string, value: unknown) => (value === null || value === undefined ? {} : { [key]: value });
      return {
        type: "tool.call",
        data: {
          tool_call_id: result.tool_call_id,
          name: result.name,
          is_error: result.is_error,
          ...given("status", status),
          ...given("duration_ms", duration_ms),
          source,
          ...given("tool_source", tool_source),
          ...given("server", server),
          ...(others as Data),
          result_seq: seq,
        },
      };
    }
    case "user":
      return spanOfMessage({ ...row, span: {} });
  }
}
