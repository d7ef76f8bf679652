/** loopd's REST API as the playground uses it (the shapes of ../shared/api-contract.md, what the page reads of them). */

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd?: number | null;
}

export interface ClientTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface Conversation {
  id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  provider: string;
  model: string;
  tools: string[];
  message_count: number;
  active_run_id: string | null;
  approval_required: string[];
  client_tools: ClientTool[];
  /** The agent's version it is pinned to (null: none). */
  agent?: { name: string; version: number } | null;
}

/** An agent at one of its versions: its own fields, then its configuration's (whatever it holds). */
export interface Agent {
  id: string;
  name: string;
  version: number;
  description: string | null;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  from_file: boolean;
  [field: string]: unknown;
}

export interface Run {
  id: string;
  status: "queued" | "running" | "requires_action" | "waiting" | "completed" | "incomplete" | "failed" | "cancelled";
  stop_reason: string | null;
  steps: number;
  provider: string;
  model: string;
  usage: Usage;
  error: { code: string; message: string } | null;
  created_at: string;
  completed_at: string | null;
  queued_behind?: string | null;
  budget_exceeded?: string;
  budget?: { max_steps: number; max_tokens: number | null; max_seconds: number | null; max_cost_usd: number | null };
}

/** One webhook of a run (`GET …/runs/:run_id/webhooks`), its attempts oldest first. */
export interface WebhookDelivery {
  id: string;
  type: string;
  url: string;
  status: "pending" | "delivered" | "failed";
  attempts: { at: string; status_code: number | null; error: string | null }[];
}

interface SpanBase {
  seq: number;
  at: string;
}
/** An attempt at a step's model call: where it went (with fallbacks, not always the run's model) and what it sent. */
interface ModelAttemptSpan extends SpanBase {
  type: "model.call";
  step: number;
  provider: string;
  model: string;
  latency_ms: number;
  request: { history_length: number; body_sha256: string | null; body?: Record<string, unknown> };
  request_verified?: boolean;
}
export interface ModelCallSpan extends ModelAttemptSpan {
  outcome: "ok";
  ttft_ms: number | null;
  response: { stop_reason: string; raw_stop_reason: string | null; usage: Usage; model: string };
}
/** An attempt that failed: retried, fallen over, or the step's end. */
export interface ModelFailedSpan extends ModelAttemptSpan {
  outcome: "failed";
  error: string;
  status: number | null;
}
export interface ToolCallSpan extends SpanBase {
  type: "tool.call";
  tool_call_id: string;
  name: string;
  is_error: boolean;
  duration_ms?: number;
  source: string;
}
export interface NoticeSpan extends SpanBase {
  type: "notice";
  text: string;
}
export interface RunEndSpan extends SpanBase {
  type: "run.end";
  status: string;
  stop_reason: string | null;
}
export interface RunPausedSpan extends SpanBase {
  type: "run.paused";
  pending: unknown[];
}
export interface SummarySpan extends SpanBase {
  type: "context.summary";
  model: string;
  latency_ms: number;
  summarizes: { from_seq: number; to_seq: number };
  summary_seq: number | null;
  usage: Usage | null;
  answer: string | null;
  error: string | null;
}
export interface OtherSpan extends SpanBase {
  type: "model.setup" | "action.answered" | "run.recovered";
}
export type Span =
  ModelCallSpan | ModelFailedSpan | ToolCallSpan | NoticeSpan | SummarySpan | RunEndSpan | RunPausedSpan | OtherSpan;

export interface Trace {
  run: Run;
  spans: Span[];
}

export interface ToolInfo {
  name: string;
  description: string;
}

/** An answer of loopd that is not 2xx, with the contract's error body read. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const KEY_STORAGE = "loopd.apiKey";
export const storedKey = () => localStorage.getItem(KEY_STORAGE) ?? "";
export const storeKey = (key: string) =>
  key ? localStorage.setItem(KEY_STORAGE, key) : localStorage.removeItem(KEY_STORAGE);
export const authHeaders = (key: string): Record<string, string> => (key ? { Authorization: `Bearer ${key}` } : {});

/** The contract's error body of a failed answer, as an ApiError (or the text as it came, when it is not that). */
export function errorOf(status: number, text: string): ApiError {
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string } };
    return new ApiError(status, error.code, error.message);
  } catch {
    return new ApiError(status, "unknown", text || `HTTP ${status}`);
  }
}

export type Api = ReturnType<typeof createApi>;

/** The calls of the page, each with the key (when there is one). */
export function createApi(key: string) {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(path, {
      method,
      headers: { ...authHeaders(key), ...(body !== undefined && { "content-type": "application/json" }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw errorOf(res.status, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }
  const conv = (id: string) => `/conversations/${encodeURIComponent(id)}`;
  const agentPath = (name: string) => `/agents/${encodeURIComponent(name)}`;
  return {
    conversations: () => call<{ data: Conversation[] }>("GET", "/conversations?limit=100").then((r) => r.data),
    createConversation: (fields: Record<string, unknown>) => call<Conversation>("POST", "/conversations", fields),
    renameConversation: (id: string, title: string) => call<Conversation>("PATCH", conv(id), { title }),
    deleteConversation: (id: string) => call<void>("DELETE", conv(id)),
    tools: () => call<{ data: ToolInfo[] }>("GET", "/tools").then((r) => r.data),
    uiMessages: <M>(id: string) => call<M[]>("GET", `/ui/chat/${encodeURIComponent(id)}/messages`),
    trace: (id: string, runId: string, expand = false) =>
      call<Trace>("GET", `${conv(id)}/runs/${encodeURIComponent(runId)}/trace${expand ? "?expand=requests" : ""}`),
    cancel: (id: string, runId: string) => call<Run>("POST", `${conv(id)}/runs/${encodeURIComponent(runId)}/cancel`),
    runs: (id: string) => call<{ data: Run[] }>("GET", `${conv(id)}/runs?limit=100`).then((r) => r.data),
    /** A message sent while a run goes: queued behind it (`on_busy: "enqueue"`), answered 202 at once. */
    enqueue: (id: string, text: string) =>
      call<{ run: Run }>("POST", `${conv(id)}/messages`, { content: text, on_busy: "enqueue", wait: false }).then(
        (r) => r.run,
      ),
    /** The canonical history (seqs, run ids), which the UI messages do not carry. */
    messages: (id: string) =>
      call<{ data: { id: string; seq: number; role: string; run_id: string | null }[] }>(
        "GET",
        `${conv(id)}/messages?limit=1000`,
      ).then((r) => r.data),
    fork: (id: string, atSeq: number) => call<Conversation>("POST", `${conv(id)}/fork`, { at_seq: atSeq }),
    /** The run as an eval case for `npm run eval` (kept as the route answers it: the page only saves it). */
    evalCase: (id: string, runId: string) =>
      call<unknown>("GET", `${conv(id)}/runs/${encodeURIComponent(runId)}/eval-case`),
    /** A file of loopd's (an attachment), read with the key. */
    blob: async (path: string) => {
      const res = await fetch(path, { headers: authHeaders(key) });
      if (!res.ok) throw errorOf(res.status, await res.text());
      return res.blob();
    },
    agents: () => call<{ data: Agent[] }>("GET", "/agents?limit=100").then((r) => r.data),
    agent: (name: string) => call<Agent>("GET", agentPath(name)),
    agentVersions: (name: string) =>
      call<{ data: Agent[] }>("GET", `${agentPath(name)}/versions?limit=100`).then((r) => r.data),
    archiveAgent: (name: string) => call<Agent>("DELETE", agentPath(name)),
    webhooks: (id: string, runId: string) =>
      call<{ data: WebhookDelivery[] }>("GET", `${conv(id)}/runs/${encodeURIComponent(runId)}/webhooks`).then(
        (r) => r.data,
      ),
  };
}
