import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace";
import type { AgentEvent } from "../core/agent-events.js";
import type { Usage } from "../core/usage.js";
import type { RunOutcome } from "../core/run-outcome.js";
import type { RunRow } from "../store/schema.js";
import type { RunObserver, Telemetry } from "./telemetry.js";

export interface TracingOptions {
  /** Where spans are sent: the OTLP/HTTP traces URL (…/v1/traces). */
  url: string;
  /** How long finished spans wait to be sent together. @default 5000 */
  scheduledDelayMs?: number;
  /** How long one export may take, retries included; closing waits for the last one at most this long. @default 3000 */
  exportTimeoutMs?: number;
  /** Told when spans cannot be sent, once until sending works again; those spans are dropped, and nothing waits for them. */
  onError?: (err: Error) => void;
  /** @default Date.now */
  now?: () => number;
  /** Where a tool comes from (its source, its MCP server): attributes of its span. @default unknown */
  describeTool?: (name: string) => { source: string; server: string | null } | undefined;
}

/**
 * OpenTelemetry spans, named and attributed by the GenAI semantic
 * conventions: one `invoke_agent` span per execution of a run, with a
 * `chat {model}` span per model call and an `execute_tool {tool}` span per
 * tool call as its children. Spans carry no message content, tool input or
 * output: those may hold what users wrote, or secrets.
 *
 * The provider is this app's own, never registered globally, and parents are
 * passed explicitly: no context manager is needed, and several apps in one
 * process keep their spans apart.
 */
export function createTracing({
  url,
  scheduledDelayMs = 5_000,
  exportTimeoutMs = 3_000,
  onError = () => {},
  now = Date.now,
  describeTool = () => undefined,
}: TracingOptions): Telemetry {
  // Told once per outage, not once per batch.
  let failing = false;
  const failed = (err: unknown) => {
    if (!failing) onError(err instanceof Error ? err : new Error(String(err)));
    failing = true;
  };
  const exporter = reportingFailures(new OTLPTraceExporter({ url, timeoutMillis: exportTimeoutMs }), (err) =>
    err ? failed(err) : (failing = false),
  );
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": "loopd" }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: scheduledDelayMs,
        exportTimeoutMillis: exportTimeoutMs,
      }),
    ],
  });
  // A collector that is down must not fail a shutdown.
  const settle = (work: Promise<void>) => work.catch(failed);
  const tracer = provider.getTracer("loopd");

  return {
    runStarted(run: RunRow): RunObserver {
      const conversation = { "gen_ai.conversation.id": run.conversationId };
      const runSpan = tracer.startSpan("invoke_agent", {
        kind: SpanKind.INTERNAL,
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.provider.name": run.provider,
          "gen_ai.request.model": run.model,
          ...conversation,
          "loopd.run.id": run.id,
          ...(run.request.agent && {
            "gen_ai.agent.name": run.request.agent.name,
            "loopd.agent.version": run.request.agent.version,
          }),
        },
      });
      const parent: Context = trace.setSpan(ROOT_CONTEXT, runSpan);
      const tools = new Map<string, { span: Span; startedAt: number }>();
      const child = (name: string, kind: SpanKind, startTime: number, attributes: Attributes) =>
        tracer.startSpan(name, { kind, startTime, attributes: { ...attributes, ...conversation } }, parent);

      const onEvent = (e: AgentEvent) => {
        switch (e.type) {
          case "model_call.finished": {
            const end = now();
            const span = child(`chat ${run.model}`, SpanKind.CLIENT, end - e.duration_ms, {
              ...chatAttributes(e.provider, run.model),
              "gen_ai.response.model": e.model,
              "gen_ai.response.finish_reasons": [e.raw_stop_reason ?? e.stop_reason],
              ...usageAttributes(e.usage),
              "loopd.step": e.step,
              ...(e.ttft_ms !== null && { "loopd.time_to_first_chunk_ms": e.ttft_ms }),
              ...(e.cost_usd !== null && { "loopd.cost_usd": e.cost_usd }),
            });
            span.end(end);
            return;
          }
          case "context.summary": {
            const end = now();
            const span = child(`chat ${e.model}`, SpanKind.CLIENT, end - e.duration_ms, {
              ...chatAttributes(e.provider, e.model),
              ...(e.usage && usageAttributes(e.usage)),
              "loopd.context.summary": true,
              ...(e.cost_usd !== null && { "loopd.cost_usd": e.cost_usd }),
            });
            if (e.error !== null) span.setStatus({ code: SpanStatusCode.ERROR });
            span.end(end);
            return;
          }
          case "model_call.failed": {
            const end = now();
            const span = child(`chat ${run.model}`, SpanKind.CLIENT, end - e.duration_ms, {
              ...chatAttributes(e.provider, run.model),
              "error.type": e.status === null ? "provider_error" : String(e.status),
              "loopd.step": e.step,
            });
            span.setStatus({ code: SpanStatusCode.ERROR });
            span.end(end);
            return;
          }
          case "tool_call.started": {
            const startedAt = now();
            const origin = describeTool(e.name);
            const span = child(`execute_tool ${e.name}`, SpanKind.INTERNAL, startedAt, {
              "gen_ai.operation.name": "execute_tool",
              "gen_ai.tool.name": e.name,
              "gen_ai.tool.call.id": e.tool_call_id,
              "gen_ai.tool.type": "function",
              ...(origin && { "loopd.tool.source": origin.source }),
              ...(origin?.server && { "loopd.tool.server": origin.server }),
            });
            tools.set(e.tool_call_id, { span, startedAt });
            return;
          }
          case "tool_call.completed": {
            const started = tools.get(e.tool_call_id);
            if (!started) return;
            tools.delete(e.tool_call_id);
            const { span, startedAt } = started;
            span.setAttribute("loopd.tool.status", e.status);
            if (e.is_error) {
              span.setAttribute(
                "error.type",
                e.status === "timeout" || e.status === "cancelled" ? e.status : "tool_error",
              );
              span.setStatus({ code: SpanStatusCode.ERROR });
            }
            span.end(startedAt + e.duration_ms);
            return;
          }
          default:
            return;
        }
      };

      return {
        onEvent,
        end(result: RunOutcome | null) {
          // Calls cut off without a result (the run stopped under them) still end, at the run's end.
          for (const { span } of tools.values()) span.end();
          tools.clear();
          if (result) {
            runSpan.setAttributes({
              "loopd.run.status": result.status,
              "loopd.run.steps": result.steps,
              ...usageAttributes(result.usage),
            });
            if (result.stopReason) runSpan.setAttribute("loopd.run.stop_reason", result.stopReason);
            if (result.status === "failed") {
              runSpan.setAttribute("error.type", result.error.code);
              runSpan.setStatus({ code: SpanStatusCode.ERROR });
            }
          } else {
            runSpan.setAttribute("loopd.run.status", "interrupted");
          }
          runSpan.end();
        },
      };
    },
    runEnded: () => {},
    flush: () => settle(provider.forceFlush()),
    close: () => settle(provider.shutdown()),
  };
}

/** The exporter, telling `outcome` how each export went (the SDK itself only tells a global diagnostic logger). */
function reportingFailures(exporter: SpanExporter, outcome: (err: Error | undefined) => void): SpanExporter {
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        outcome(result.error);
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

const chatAttributes = (provider: string, model: string): Attributes => ({
  "gen_ai.operation.name": "chat",
  "gen_ai.provider.name": provider,
  "gen_ai.request.model": model,
});

/** The conventions count every input token, cached or not, in `input_tokens`; loopd keeps the cached ones apart. */
const usageAttributes = (usage: Usage): Attributes => ({
  "gen_ai.usage.input_tokens": usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
  "gen_ai.usage.output_tokens": usage.output_tokens,
  "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
  "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
});
