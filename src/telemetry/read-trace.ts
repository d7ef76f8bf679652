import type { AssistantBlock, NewMessage } from "../agent/messages.js";
import type { ModelProvider, ModelRequestBody, ProviderName } from "../agent/model.js";
import { historyOf } from "../runs/history-of.js";
import type { MessageRow, RunRow } from "../store/schema.js";
import type { Store } from "../store/store.js";
import { TRACE_START, type TracedMessage } from "../store/trace-repository.js";
import { rebuildBody, rebuildRequest } from "./rebuild-request.js";
import type { Redactor } from "./redact.js";
import { bodySha256 } from "./body-hash.js";
import { spanOfMessage } from "./message-span.js";
import type { ModelCallRecord, ModelSetup } from "./run-tracer.js";

/** A span as the trace route shows it: its number, type and time, then its data (with the messages it points to filled in). */
export type TraceSpan = { seq: number; type: string; at: string } & Record<string, unknown>;

export interface ReadTraceOptions {
  store: Pick<Store, "traces" | "messages">;
  providers: Record<ProviderName, ModelProvider>;
  run: Pick<RunRow, "id" | "conversationId" | "firstSeq">;
  redactor: Redactor;
  /** Put each model call's request in its span whole, as the provider received it. @default false */
  expandRequests?: boolean;
  /** Spans read from the database at a time. @default 200 */
  pageSize?: number;
}

/**
 * A run's trace, span after span, read from the database a page at a time:
 * without `expandRequests` it holds one page in memory, however long the
 * run. A model call's answer and a tool call's output are read from the
 * messages they tell (which hold their spans). Expanded, each request is
 * rebuilt from the stored history (read once, as far as the calls need it)
 * and checked against the sha256 of the body that was sent
 * (`request_verified`).
 */
export async function* readTrace({ expandRequests = false, ...options }: ReadTraceOptions): AsyncGenerator<TraceSpan> {
  const { providers, redactor } = options;
  for await (const { span, request, setup } of traceEntries({ ...options, rebuild: expandRequests })) {
    const provider = setup && providers[setup.provider as ProviderName];
    if (request && provider) {
      const record = span.request as ModelCallRecord;
      const body = rebuildBody(provider, request);
      span.request = { ...record, body: redactor.value(body) };
      span.request_verified = record.body_sha256 !== null && bodySha256(body) === record.body_sha256;
    }
    yield span;
  }
}

/**
 * The spans of a run's trace with, for each model call when `rebuild` is
 * set, the request it was made with, rebuilt (see `readTrace`).
 */
export async function* traceEntries({
  store,
  run,
  redactor,
  rebuild,
  pageSize = 200,
}: Omit<ReadTraceOptions, "expandRequests" | "providers"> & { rebuild: boolean }): AsyncGenerator<{ span: TraceSpan; request?: ModelRequestBody; setup?: ModelSetup }> {
  const setups = new Map<string, ModelSetup>();
  const history: NewMessage[] = [];
  // A call's setup is stored only when it changes; a tool call's input is its call's, in the last answer.
  let lastSetup: string | undefined;
  let lastCalls = new Map<string, unknown>();
  // Spans are numbered as they come, from 1: both sources merged, in the order things happened.
  let seq = 0;
  const after = { ...TRACE_START };
  for (;;) {
    const page = await store.traces.page({ run, after, limit: pageSize });
    for (const entry of page) {
      if (entry.row) after.spanSeq = entry.row.seq;
      else after.messageSeq = entry.message.seq;
    }
    for (const { row, message } of page) {
      const { type, data } = row ?? spanOfMessage(message);
      if (type === "model.setup") setups.set(data.hash as string, data as unknown as ModelSetup);
      const span: TraceSpan = { seq: ++seq, type, at: (row ?? message).createdAt.toISOString(), ...data };
      if (type === "tool.call") {
        const input = data.input ?? lastCalls.get(data.tool_call_id as string);
        if (input !== undefined) span.input = redactor.value(input);
        span.output = redactor.value(toolOutputOf(message));
      }
      let record = data.request as ModelCallRecord | undefined;
      if (record) {
        record = { ...record, setup: record.setup ?? lastSetup! };
        lastSetup = record.setup;
        span.request = record;
      }
      if (type === "model.call") {
        const content = (message?.content ?? []) as AssistantBlock[];
        lastCalls = new Map(content.flatMap((b) => (b.type === "tool_call" ? [[b.id, b.input] as const] : [])));
        span.response = { ...(data.response as object), content: redactor.value(content) };
      }
      const setup = record?.setup === undefined ? undefined : setups.get(record.setup);
      if (rebuild && record && setup && (type === "model.call" || type === "model.failed")) {
        await loadHistory({ store, run, history, upTo: record.history_length });
        yield { span, request: rebuildRequest({ record, setup, history }), setup };
      } else {
        yield { span };
      }
    }
    if (page.length < pageSize) return;
  }
}

function toolOutputOf(message: TracedMessage | undefined): string | null {
  const block = (message?.content as MessageRow["content"] | undefined)?.[0];
  return block && block.type === "tool_result" ? block.content : null;
}

/**
 * Extends `history` (seq i + 1 at index i) to at least `upTo` messages. A
 * turn refused in an earlier run is left out of what later calls were sent;
 * this run's own refused turn was marked only as it ended, after its calls.
 */
async function loadHistory({ store, run, history, upTo }: { store: Pick<Store, "messages">; run: Pick<RunRow, "id" | "conversationId">; history: NewMessage[]; upTo: number }) {
  while (history.length < upTo) {
    const rows = await store.messages.page({ conversationId: run.conversationId, afterSeq: history.length, limit: Math.min(500, upTo - history.length) });
    if (rows.length === 0) return;
    history.push(...historyOf(rows.map((r) => (r.runId === run.id ? { ...r, excluded: null } : r))));
  }
}
