import type { AgentEvent } from "../../core/agent-events.js";
import type { ContextSettings } from "../../core/context-settings.js";
import type { NewMessage, UserBlock } from "../../core/messages.js";
import type { ToolChoice, ToolSpec } from "../../core/model-provider.js";
import type { ToolCallCompletion } from "../../core/run-outcome.js";
import type { NewRunSpan } from "../../store/save-run-step.js";
import { createBodyHasher, jsonSha256 } from "./body-hash.js";
import type { Redactor } from "../../util/redact.js";
import { redactedSetup } from "./redacted-setup.js";
import type { ToolOrigin } from "../../tools/tool-registry.js";

/**
 * The spans of a run's trace, built from what the loop reports and what the
 * run writer saves; the writer saves them with the step they tell. Stored
 * compactly: a model call keeps what its request was built from, not the
 * history it was sent (`rebuildRequest` makes it again), plus the sha256 of
 * the exact body; its answer and a tool call's output are the stored
 * messages they point to (`message_seq`, `result_seq`). A system prompt
 * with its tools (`model.setup`) is kept once per run, by hash. A span that
 * tells a message (`messageSeq`) is saved on that message's row, without
 * what the row holds (see message-span.ts).
 *
 * Span types and their data:
 * - `model.setup`   ModelSetup
 * - `model.call`    an answered attempt: {step, started_at, latency_ms, ttft_ms, request: ModelCallRecord, response: {message_seq, stop_reason, raw_stop_reason, usage, model, request_id}}
 *   a failed one: {step, started_at, latency_ms, outcome: "failed", request: ModelCallRecord, error, status}
 *   (the reader adds `outcome: "ok"` to an answered one, and to both the `provider` and `model` of their setup;
 *   traces stored before kept a failed attempt as a `model.failed` span, which the reader reads as a failed `model.call`)
 * - `tool.call`     {tool_call_id, name, is_error, status?, duration_ms?, source, tool_source?, server?, result_seq}
 *   (`source`: who made the result, the tool or loopd; `tool_source`: where the tool comes from, builtin, http, mcp or command, and `server` its MCP server)
 *   (its input is its call's, in the answer of the last `model.call`; the reader puts it back)
 * - `notice`        {message_seq, text}
 * - `context.summary` {started_at, latency_ms, provider, model, summarizes, summary_seq, usage, cost_usd, request, answer, error}
 *   (a summary call: its request whole, as its provider's SDK was handed it; `summary_seq` the saved summary, null when it failed)
 * - `action.answered` {actor, approvals, tool_outputs}
 * - `run.recovered` {steps, interrupted_calls, cancel_requested}
 * - `run.paused`    {pending, timeout_s, steps, usage}
 * - `run.end`       {status, stop_reason, error, budget_exceeded, result, steps, usage, completed_at}
 */
export type TraceSpanType =
  | "model.setup"
  | "model.call"
  | "tool.call"
  | "notice"
  | "context.summary"
  | "action.answered"
  | "run.recovered"
  | "run.paused"
  | "run.end";

/**
 * What every model call of a run shares, kept once (`model.setup`, by its
 * `hash`): the provider, the requested model, the system prompt, the tools,
 * the context settings and the request's fixed parameters.
 */
export interface ModelSetup {
  hash: string;
  provider: string;
  model: string;
  system: string | null;
  tools: ToolSpec[];
  context: ContextSettings;
  fixed_tokens: number;
  max_tokens: number;
  cache_key: string | null;
}

/** What a `model.call` span keeps of its own request; the rest is its setup's. */
export interface ModelCallRecord {
  /** Built from the stored messages with seq 1 … history_length. */
  history_length: number;
  token_ratio: number;
  tool_choice: ToolChoice;
  /** This call's output limit when a budget left it less than the setup's. */
  max_tokens?: number;
  /** The `model.setup` span's hash; stored only when it differs from the previous call's (the reader puts it back). */
  setup?: string;
  /** sha256 of the body as handed to the SDK (its canonical JSON: `bodySha256`); null when the provider failed before building it. */
  body_sha256: string | null;
}

/** Where a tool result came from: a call loopd ran, one the client answered or the user declined, or one loopd answered without running it (cancelled, interrupted, not executed). */
export type ResultOrigin = "executed" | "client" | "declined" | "loopd";

type ModelCallEvent = Extract<AgentEvent, { type: "model_call.finished" | "model_call.failed" }>;

/**
 * A call's setup, made (and hashed) once per distinct setup: the loop hands
 * every call of a run the same tools array and system prompt.
 */
const setups = new WeakMap<object, Map<string | null, Map<string, ModelSetup>>>();
function setupOf(e: ModelCallEvent): ModelSetup {
  const { request } = e;
  let bySystem = setups.get(request.tools);
  if (!bySystem) setups.set(request.tools, (bySystem = new Map()));
  let byRest = bySystem.get(request.system);
  if (!byRest) bySystem.set(request.system, (byRest = new Map()));
  const rest = JSON.stringify([
    e.provider,
    request.model,
    request.context,
    request.fixed_tokens,
    request.max_tokens_limit,
    request.cache_key,
  ]);
  let setup = byRest.get(rest);
  if (!setup) {
    const { system, tools, context, fixed_tokens, max_tokens_limit, cache_key, model } = request;
    const fields = {
      provider: e.provider,
      model,
      system,
      tools,
      context,
      fixed_tokens,
      max_tokens: max_tokens_limit,
      cache_key,
    };
    byRest.set(rest, (setup = { hash: jsonSha256(fields), ...fields }));
  }
  return setup;
}

export function createRunTracer({
  redactor,
  describeTool = () => undefined,
}: {
  redactor: Redactor;
  describeTool?: ((name: string) => ToolOrigin | undefined) | undefined;
}) {
  const setupsSent = new Set<string>();
  let lastSetup: string | null = null;
  const hashBody = createBodyHasher();

  return {
    /** A model call's spans: its setup when this run has not kept it yet, then the call. */
    modelCall(e: ModelCallEvent): NewRunSpan[] {
      const setup = setupOf(e);
      const spans: NewRunSpan[] = [];
      if (!setupsSent.has(setup.hash)) {
        setupsSent.add(setup.hash);
        spans.push({ type: "model.setup", data: redactedSetup(redactor, setup) });
      }
      const record: ModelCallRecord = {
        history_length: e.request.history_length,
        token_ratio: e.request.token_ratio,
        tool_choice: e.request.tool_choice,
        ...(e.request.max_tokens !== setup.max_tokens && { max_tokens: e.request.max_tokens }),
        ...(setup.hash !== lastSetup && { setup: setup.hash }),
        body_sha256: e.body === null ? null : hashBody(e.body),
      };
      lastSetup = setup.hash;
      const common = {
        step: e.step,
        started_at: new Date(e.started_at).toISOString(),
        latency_ms: e.duration_ms,
        request: record,
      };
      if (e.type === "model_call.failed") {
        spans.push({
          type: "model.call",
          data: { ...common, outcome: "failed", error: redactor.text(e.error), status: e.status },
        });
        return spans;
      }
      // The answer is saved right after the call, as the history's next message.
      const messageSeq = e.content.length > 0 ? e.request.history_length + 1 : null;
      spans.push({
        type: "model.call",
        ...(messageSeq !== null && { messageSeq }),
        data: {
          ...common,
          ttft_ms: e.ttft_ms,
          response: {
            message_seq: messageSeq,
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

    /** A summary call's span; its request and answer are redacted like every model call's. */
    summary(e: Extract<AgentEvent, { type: "context.summary" }>): NewRunSpan {
      const { provider, model, summarizes, summary_seq, usage, cost_usd, answer, error, body } = e;
      return {
        type: "context.summary",
        data: {
          started_at: new Date(e.started_at).toISOString(),
          latency_ms: e.duration_ms,
          provider,
          model,
          summarizes,
          summary_seq,
          usage,
          cost_usd,
          request: body === null ? {} : redactor.value(body),
          answer: answer === null ? null : redactor.text(answer),
          error: error === null ? null : redactor.text(error),
        },
      };
    },

    /** The spans of messages being saved from `firstSeq` on: each tool result, each notice. */
    saved(
      messages: readonly NewMessage[],
      firstSeq: number,
      completed: readonly ToolCallCompletion[] = [],
    ): NewRunSpan[] {
      return messages.flatMap((m, i): NewRunSpan[] => {
        if (m.role === "user" && m.kind === "notice")
          return [
            {
              type: "notice",
              messageSeq: firstSeq + i,
              data: { message_seq: firstSeq + i, text: noticeText(m.content) },
            },
          ];
        if (m.role !== "tool") return [];
        const result = m.content[0];
        const done = completed.find((c) => c.tool_call_id === result.tool_call_id);
        // A result without a status was written by loopd (a repair after a crash, a call not executed), not by running the tool.
        return [
          toolSpan({
            result,
            seq: firstSeq + i,
            source: done?.status ? "executed" : "loopd",
            done,
            origin: describeTool(result.name),
          }),
        ];
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
  origin,
}: {
  result: { tool_call_id: string; name: string; is_error: boolean };
  seq: number;
  source: ResultOrigin;
  done?: ToolCallCompletion | undefined;
  origin?: ToolOrigin | undefined;
}): NewRunSpan {
  return {
    type: "tool.call",
    messageSeq: seq,
    data: {
      tool_call_id: result.tool_call_id,
      name: result.name,
      is_error: result.is_error,
      ...(done?.status !== undefined && { status: done.status }),
      ...(done && { duration_ms: done.duration_ms }),
      source,
      ...(origin && { tool_source: origin.source }),
      ...(origin?.server && { server: origin.server }),
      result_seq: seq,
    },
  };
}

/** A notice span's text: its message's. */
export const noticeText = (content: readonly UserBlock[]) =>
  content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");

/** How a run ended, as its last span tells it; `completed_at` null is filled in by the save (the database's clock). */
export interface RunEndData {
  status: string;
  stop_reason: string | null;
  error: { code: string; message: string } | null;
  budget_exceeded: string | null;
  result: unknown;
  steps: number;
  usage: unknown;
  completed_at: string | null;
}

export const runEndSpan = (data: RunEndData): NewRunSpan => ({ type: "run.end", data: { ...data } });
