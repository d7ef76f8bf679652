import type { NewMessage } from "../agent/messages.js";
import type { ModelProvider, ModelRequestBody, ProviderName } from "../agent/model.js";
import { historyOf } from "../runs/history-of.js";
import type { MessageRow, RunRow, RunSpanRow } from "../store/schema.js";
import type { Store } from "../store/store.js";
import { rebuildBody, rebuildRequest } from "./rebuild-request.js";
import type { Redactor } from "./redact.js";
import { bodySha256 } from "./body-hash.js";
import type { ModelCallRecord, ModelSetup } from "./run-tracer.js";

/** A span as the trace route shows it: its number, type and time, then its data (with the messages it points to filled in). */
export type TraceSpan = { seq: number; type: string; at: string } & Record<string, unknown>;

export interface ReadTraceOptions {
  store: Pick<Store, "traces" | "messages">;
  providers: Record<ProviderName, ModelProvider>;
  run: Pick<RunRow, "id" | "conversationId">;
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
 * messages they point to. Expanded, each request is rebuilt from the stored
 * history (read once, as far as the calls need it) and checked against the
 * sha256 of the body that was sent (`request_verified`).
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
  for (let after = 0; ; ) {
    const page = await store.traces.page({ runId: run.id, afterSeq: after, limit: pageSize });
    if (page.length === 0) return;
    after = page.at(-1)!.seq;
    const rows = await store.messages.bySeqs(run.conversationId, [...new Set(page.flatMap(seqsOf))]);
    const bySeq = new Map(rows.map((r) => [r.seq, r]));
    for (const row of page) {
      const data = row.data;
      if (row.type === "model.setup") setups.set(data.hash as string, data as unknown as ModelSetup);
      const span: TraceSpan = { seq: row.seq, type: row.type, at: row.createdAt.toISOString(), ...data };
      if (row.type === "tool.call") {
        const input = data.input ?? lastCalls.get(data.tool_call_id as string);
        if (input !== undefined) span.input = redactor.value(input);
        span.output = redactor.value(toolOutputOf(bySeq.get(data.result_seq as number)));
      }
      let record = data.request as ModelCallRecord | undefined;
      if (record) {
        record = { ...record, setup: record.setup ?? lastSetup! };
        lastSetup = record.setup;
        span.request = record;
      }
      if (row.type === "model.call") {
        const response = data.response as { message_seq: number | null };
        const content = (response.message_seq === null ? undefined : bySeq.get(response.message_seq))?.content ?? [];
        lastCalls = new Map(content.flatMap((b) => (b.type === "tool_call" ? [[b.id, b.input] as const] : [])));
        span.response = { ...response, content: redactor.value(content) };
      }
      const setup = record?.setup === undefined ? undefined : setups.get(record.setup);
      if (rebuild && record && setup && (row.type === "model.call" || row.type === "model.failed")) {
        await loadHistory({ store, run, history, upTo: record.history_length });
        yield { span, request: rebuildRequest({ record, setup, history }), setup };
      } else {
        yield { span };
      }
    }
    if (page.length < pageSize) return;
  }
}

/** The message seqs a span points to. */
function seqsOf(span: RunSpanRow): number[] {
  const d = span.data as { result_seq?: number; response?: { message_seq?: number | null } };
  if (span.type === "tool.call" && typeof d.result_seq === "number") return [d.result_seq];
  if (span.type === "model.call" && typeof d.response?.message_seq === "number") return [d.response.message_seq];
  return [];
}

function toolOutputOf(row: MessageRow | undefined): string | null {
  const block = row?.content[0];
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
