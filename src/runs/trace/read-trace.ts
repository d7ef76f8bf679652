import type { AssistantBlock, AttachmentData, NewMessage } from "../../core/messages.js";
import type { ModelProvider, ModelRequestBody, ProviderName } from "../../core/model-provider.js";
import { historyOf, type HistoryRow } from "../../store/message-repository.js";
import type { MessageRow, RunRow } from "../../store/schema.js";
import type { Store } from "../../store/store.js";
import { TRACE_START, type TracedMessage } from "../../store/trace-repository.js";
import { rebuildBody, rebuildRequest } from "./rebuild-request.js";
import type { Redactor } from "../../util/redact.js";
import { bodySha256 } from "./body-hash.js";
import { spanOfMessage } from "./message-span.js";
import type { ModelCallRecord, ModelSetup } from "./run-tracer.js";

/** A span as the trace route shows it: its number, type and time, then its data (with the messages it points to filled in). */
export type TraceSpan = { seq: number; type: string; at: string } & Record<string, unknown>;

/** Where a run's spans are read from (see `traceSpans`). */
export interface TraceSource {
  store: Pick<Store, "traces">;
  run: Pick<RunRow, "id" | "conversationId" | "firstSeq">;
  redactor: Redactor;
  /** Spans read from the database at a time. @default 200 */
  pageSize?: number;
}

/** A run's spans, its history and its attachments in the database (see `storedTraceEntries`). */
export interface StoredTrace extends TraceSource {
  store: Pick<Store, "traces" | "messages" | "attachments">;
  /** The tenant of the run's conversation: its attachments are read in its scope. */
  tenant: string;
}

export interface ReadTraceOptions extends StoredTrace {
  providers: Record<ProviderName, ModelProvider>;
  /** Put each model call's request in its span whole, as the provider received it. @default false */
  expandRequests?: boolean;
}

/**
 * A run's trace, span after span, read from the database a page at a time:
 * without `expandRequests` it holds one page in memory, however long the
 * run. A model call's answer and a tool call's output are read from the
 * messages they tell (which hold their spans). Expanded, each request is
 * rebuilt from the stored history (read once, as far as the calls need it)
 * and the bytes of its attachments (each read once), and checked against the sha256 of the body that was sent
 * (`request_verified`).
 */
export async function* readTrace({ expandRequests = false, ...options }: ReadTraceOptions): AsyncGenerator<TraceSpan> {
  const { providers, redactor } = options;
  if (!expandRequests) return yield* traceSpans(options);
  for await (const { span, request, setup } of storedTraceEntries(options)) {
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

/** A span of a trace and, for a model call, the request it was made with, rebuilt. */
export interface TraceEntry {
  span: TraceSpan;
  request?: ModelRequestBody;
  setup?: ModelSetup;
}

/** The spans of a run's trace from the database, each model call with its request rebuilt (see `withRequests`). */
export const storedTraceEntries = (options: StoredTrace): AsyncGenerator<TraceEntry> =>
  withRequests(traceSpans(options), storedHistory(options), (history) =>
    options.store.attachments.dataOf(options.tenant, history),
  );

/**
 * The first `upTo` messages of the run's conversation (at least), as each
 * of its model calls was built from: `history[i]` has seq i + 1.
 */
export type HistoryReader = (upTo: number) => Promise<readonly NewMessage[]>;

/** The bytes of the attachments `messages` refer to (see `AttachmentData`). */
export type AttachmentReader = (messages: readonly NewMessage[]) => Promise<AttachmentData>;

/**
 * Each model call of a trace (spans as `traceSpans` or the trace route gives
 * them) with the request it was made with, rebuilt from its record, its
 * run's setup, the history and its attachments: the context builder and the
 * request builders are pure, so this is what the call sent. The history grows
 * as the calls need it; each message is looked at for attachments once, so
 * each attachment's bytes are read once.
 */
export async function* withRequests(
  spans: AsyncIterable<TraceSpan>,
  history: HistoryReader,
  readAttachments: AttachmentReader,
): AsyncGenerator<TraceEntry> {
  const setups = new Map<string, ModelSetup>();
  const attachments = new Map<string, string>();
  let looked = 0;
  const attachmentsOf = async (messages: readonly NewMessage[]): Promise<AttachmentData> => {
    if (messages.length > looked)
      for (const [id, data] of await readAttachments(messages.slice(looked))) attachments.set(id, data);
    looked = Math.max(looked, messages.length);
    return attachments;
  };
  for await (const span of spans) {
    if (span.type === "model.setup") setups.set(span.hash as string, span as unknown as ModelSetup);
    const record = span.request as ModelCallRecord | undefined;
    const setup = record?.setup === undefined ? undefined : setups.get(record.setup);
    if (record && setup && (span.type === "model.call" || span.type === "model.failed")) {
      const messages = await history(record.history_length);
      yield {
        span,
        request: rebuildRequest({ record, setup, history: messages, attachments: await attachmentsOf(messages) }),
        setup,
      };
    } else {
      yield { span };
    }
  }
}

/** The spans of a run's trace, from the database (see `readTrace`). */
export async function* traceSpans({ store, run, redactor, pageSize = 200 }: TraceSource): AsyncGenerator<TraceSpan> {
  // A call's setup is stored only when it changes; a tool call's input is its call's, in the last answer.
  let lastSetup: string | undefined;
  let lastCalls = new Map<string, unknown>();
  const models = new Map<string, { provider: unknown; model: unknown }>();
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
      const { type, data } = modelCallOf(row ?? spanOfMessage(message));
      if (type === "model.setup") models.set(data.hash as string, { provider: data.provider, model: data.model });
      // A call's provider and model are its setup's: with fallbacks, not always the run's.
      const setupHash = (data.request as ModelCallRecord | undefined)?.setup ?? lastSetup;
      const attempt = type === "model.call" && setupHash !== undefined ? models.get(setupHash) : undefined;
      const span: TraceSpan = { seq: ++seq, type, at: (row ?? message).createdAt.toISOString(), ...attempt, ...data };
      if (type === "tool.call") {
        const input = data.input ?? lastCalls.get(data.tool_call_id as string);
        if (input !== undefined) span.input = redactor.value(input);
        span.output = redactor.value(toolOutputOf(message));
      }
      const record = data.request as ModelCallRecord | undefined;
      if (record) {
        span.request = { ...record, setup: record.setup ?? lastSetup! };
        lastSetup = (span.request as ModelCallRecord).setup;
      }
      if (type === "model.call" && data.outcome === "ok") {
        const content = (message?.content ?? []) as AssistantBlock[];
        lastCalls = new Map(content.flatMap((b) => (b.type === "tool_call" ? [[b.id, b.input] as const] : [])));
        span.response = { ...(data.response as object), content: redactor.value(content) };
      }
      yield span;
    }
    if (page.length < pageSize) return;
  }
}

/**
 * A model call's span with its `outcome`: `ok` for an answered attempt (its
 * answer is a stored message), `failed` for one that was not; traces stored
 * before failed attempts were `model.call` spans kept them as `model.failed`.
 */
function modelCallOf(span: { type: string; data: Record<string, unknown> }): {
  type: string;
  data: Record<string, unknown>;
} {
  if (span.type === "model.failed") return { type: "model.call", data: { ...span.data, outcome: "failed" } };
  if (span.type === "model.call" && span.data.outcome === undefined)
    return { type: span.type, data: { ...span.data, outcome: "ok" } };
  return span;
}

function toolOutputOf(message: TracedMessage | undefined): string | null {
  const block = (message?.content as MessageRow["content"] | undefined)?.[0];
  return block && block.type === "tool_result" ? block.content : null;
}

/** A stored message as a history reader pages through it (from the database, or from a server's API). */
export type PagedMessage = Pick<HistoryRow, "role" | "content" | "kind" | "summarizes" | "excluded"> & {
  runId: string | null;
};

/**
 * The run's conversation as its calls were built from it, read a page at a
 * time as far as the calls need it, once. A turn refused in an earlier run
 * is left out of what later calls were sent; this run's own refused turn was
 * marked only as it ended, after its calls.
 */
export function pagedHistory(
  runId: string,
  page: (afterSeq: number, limit: number) => Promise<PagedMessage[]>,
): HistoryReader {
  const history: NewMessage[] = [];
  return async (upTo) => {
    while (history.length < upTo) {
      const rows = await page(history.length, Math.min(500, upTo - history.length));
      if (rows.length === 0) break;
      history.push(
        ...historyOf(rows.map((r) => (r.runId === runId && r.excluded === "refusal" ? { ...r, excluded: null } : r))),
      );
    }
    return history;
  };
}

/** The run's conversation from the database (see `pagedHistory`). */
export const storedHistory = ({
  store,
  run,
}: {
  store: Pick<Store, "messages">;
  run: Pick<RunRow, "id" | "conversationId">;
}): HistoryReader =>
  pagedHistory(run.id, (afterSeq, limit) =>
    store.messages.page({ conversationId: run.conversationId, afterSeq, limit }),
  );
