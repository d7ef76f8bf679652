import { createHash } from "node:crypto";
import type { AgentEvent } from "../agent/agent-events.js";
import type { NewMessage } from "../agent/messages.js";
import type { ToolCallCompletion } from "../agent/run-agent-loop.js";
import type { NewRunSpan } from "../store/run-repository.js";
import type { Redactor } from "./redact.js";

/**
 * The spans of a run's trace, built from what the loop reports and what the
 * run writer saves; the writer saves them with the step they tell. Stored
 * compactly: a model call keeps what its request was built from, not the
 * history it was sent (`rebuildRequest` makes it again), plus the sha256 of
 * the exact body; its answer and a tool call's output are the stored
 * messages they point to (`message_seq`, `result_seq`). A system prompt
 * with its tools (`model.setup`) is kept once per run, by hash.
 *
 * Span types and their data:
 * - `model.setup`   {hash, system, tools}
 * - `model.call`    {step, provider, model, started_at, latency_ms, ttft_ms, request: ModelCallRecord, response: {message_seq, stop_reason, raw_stop_reason, usage, model, request_id}}
 * - `model.failed`  {step, provider, model, started_at, latency_ms, request: ModelCallRecord, error, status}
 * - `tool.call`     {tool_call_id, name, input?, is_error, status?, duration_ms?, source, result_seq}
 * - `notice`        {message_seq, text}
 * - `action.answered` {actor, approvals, tool_outputs}
 * - `run.recovered` {steps, interrupted_calls, cancel_requested}
 * - `run.paused`    {pending, timeout_s, steps, usage}
 * - `run.end`       {status, stop_reason, error, budget_exceeded, result, steps, usage, completed_at}
 */
export type TraceSpanType =
  | "model.setup"
  | "model.call"
  | "model.failed"
  | "tool.call"
  | "notice"
  | "action.answered"
  | "run.recovered"
  | "run.paused"
  | "run.end";

/** What a `model.call` span keeps of its request. */
export interface ModelCallRecord {
  history_length: number;
  context: { strategy: "full" | "trim"; keep_tool_results: number; max_input_tokens: number | null };
  token_ratio: number;
  fixed_tokens: number;
  model: string;
  /** The `model.setup` span that holds its system prompt and tools. */
  setup: string;
  tool_choice: unknown;
  max_tokens: number;
  cache_key: string | null;
  /** sha256 of the body as handed to the SDK (JSON, keys sorted: `jsonSha256`); null when the provider failed before building it. */
  body_sha256: string | null;
}

/** Where a tool result came from: a call loopd ran, one the client answered or the user declined, or one loopd answered without running it (cancelled, interrupted, not executed). */
export type ToolSource = "executed" | "client" | "declined" | "loopd";

type ModelCallEvent = Extract<AgentEvent, { type: "model_call.finished" | "model_call.failed" }>;

export const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

/**
 * The sha256 of a JSON value with its object keys sorted: the same for a
 * body and its rebuild from stored rows (jsonb does not keep key order).
 */
export function jsonSha256(value: unknown): string {
  return sha256(canonicalJson(value));
}

/** JSON.stringify with object keys sorted. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
  const parts: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${parts.join(",")}}`;
}

/** One system prompt and tool list → its hash, worked out once (the loop hands the same tools array to every call). */
const setupHashes = new WeakMap<object, Map<string | null, string>>();
function setupHashOf(system: string | null, tools: object): string {
  let bySystem = setupHashes.get(tools);
  if (!bySystem) setupHashes.set(tools, (bySystem = new Map()));
  let hash = bySystem.get(system);
  if (hash === undefined) bySystem.set(system, (hash = sha256(JSON.stringify({ system, tools }))));
  return hash;
}

export function createRunTracer({ redactor }: { redactor: Redactor }) {
  const setupsSent = new Set<string>();

  return {
    /** A model call's spans: its setup when this run has not kept it yet, then the call. */
    modelCall(e: ModelCallEvent): NewRunSpan[] {
      const { request } = e;
      const setup = setupHashOf(request.system, request.tools);
      const spans: NewRunSpan[] = [];
      if (!setupsSent.has(setup)) {
        setupsSent.add(setup);
        spans.push({ type: "model.setup", data: redactor.value({ hash: setup, system: request.system, tools: request.tools }) });
      }
      const record: ModelCallRecord = {
        history_length: request.history_length,
        context: request.context,
        token_ratio: request.token_ratio,
        fixed_tokens: request.fixed_tokens,
        model: request.model,
        setup,
        tool_choice: request.tool_choice,
        max_tokens: request.max_tokens,
        cache_key: request.cache_key,
        body_sha256: e.body === null ? null : jsonSha256(e.body),
      };
      const common = { step: e.step, provider: e.provider, model: e.model, started_at: new Date(e.started_at).toISOString(), latency_ms: e.duration_ms, request: record };
      if (e.type === "model_call.failed") {
        spans.push({ type: "model.failed", data: { ...common, error: redactor.text(e.error), status: e.status } });
        return spans;
      }
      spans.push({
        type: "model.call",
        data: {
          ...common,
          ttft_ms: e.ttft_ms,
          response: {
            // The answer is saved right after the call, as the history's next message.
            message_seq: e.content.length > 0 ? request.history_length + 1 : null,
            stop_reason: e.stop_reason,
            raw_stop_reason: e.raw_stop_reason,
            usage: e.usage,
            model: e.model,
            request_id: e.request_id,
          },
        },
      });
      return spans;
    },

    /** The spans of messages being saved from `firstSeq` on: each tool result, each notice. */
    saved(messages: readonly NewMessage[], firstSeq: number, completed: readonly ToolCallCompletion[] = []): NewRunSpan[] {
      return messages.flatMap((m, i): NewRunSpan[] => {
        if (m.role === "user" && m.kind === "notice") return [{ type: "notice", data: { message_seq: firstSeq + i, text: m.content.map((b) => b.text).join("\n") } }];
        if (m.role !== "tool") return [];
        const result = m.content[0];
        const done = completed.find((c) => c.tool_call_id === result.tool_call_id);
        return [toolSpan({ result, seq: firstSeq + i, source: done ? "executed" : "loopd", done, redactor })];
      });
    },
  };
}

export type RunTracer = ReturnType<typeof createRunTracer>;

/** A tool call's span; its output is the stored tool message `seq`. */
export function toolSpan({
  result,
  seq,
  source,
  done,
  redactor,
}: {
  result: { tool_call_id: string; name: string; is_error: boolean };
  seq: number;
  source: ToolSource;
  done?: ToolCallCompletion | undefined;
  redactor: Redactor;
}): NewRunSpan {
  return {
    type: "tool.call",
    data: {
      tool_call_id: result.tool_call_id,
      name: result.name,
      ...(done?.input !== undefined && { input: redactor.value(done.input) }),
      is_error: result.is_error,
      ...(done?.status !== undefined && { status: done.status }),
      ...(done && { duration_ms: done.duration_ms }),
      source,
      result_seq: seq,
    },
  };
}
