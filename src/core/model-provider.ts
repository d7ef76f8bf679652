import type { AssistantBlock, AttachmentData, NewMessage } from "./messages.js";
import type { Usage } from "./usage.js";

/**
 * What the agent loop needs from a model. Implemented in src/providers/*;
 * the loop never sees an SDK type.
 */

/** Every model provider loopd knows; each has its folder in src/providers/ and its entry in providers/registry.ts. */
export const PROVIDER_NAMES = ["anthropic", "openai", "mock"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export type ToolChoice = "auto" | "none" | "required" | { name: string };

/** A tool as the model is told about it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12 / OpenAPI-compatible object schema). */
  inputSchema: Record<string, unknown>;
  /** A client's tool (the application runs it); absent: the server's. */
  client?: true;
}

/**
 * Why the model stopped, in loopd's own words. Each provider maps its stop
 * reasons onto these in `map-…-stop-reason.ts`.
 */
export type ModelStopReason =
  | "tool_use" // execute the tool calls and continue
  | "end_turn" // final answer
  | "max_tokens" // output limit hit: partial answer
  | "refusal" // Anthropic refusal
  | "content_filter" // OpenAI content filter
  | "pause_turn" // Anthropic: continue the turn with another call
  | "context_window_exceeded";

export interface ModelRequest {
  model: string;
  system: string | null;
  /** The whole history, already repaired (no orphan tool calls). */
  messages: NewMessage[];
  tools: ToolSpec[];
  toolChoice: ToolChoice;
  maxTokens: number;
  /** The bytes of the attachments `messages` refer to (see `AttachmentData`). */
  attachments?: AttachmentData;
  /**
   * Prompt caching on, keyed by this (the conversation's id): Anthropic
   * requests carry `cache_control` breakpoints, OpenAI requests
   * `prompt_cache_key`. Null or absent: off.
   */
  cacheKey?: string | null;
  signal?: AbortSignal;
  /** Called with each piece of assistant text as the provider streams it. */
  onTextDelta?: (delta: string) => void;
  /**
   * Called on each chunk that carries part of the answer (the message's start
   * and end, text, tool-call arguments, thinking), never on keep-alives: the
   * loop's idle watchdog counts from the last call.
   */
  onProgress?: () => void;
  /** The usage so far, as the provider reports it mid-stream (Anthropic does; a call cut off then still counts it). */
  onUsage?: (usage: Usage) => void;
  /** Called with the request body exactly as handed to the SDK, before it is sent (for the run's trace). */
  onRequest?: (body: object) => void;
}

/** A model call's request without what only the call itself needs (its signal and callbacks). */
export type ModelRequestBody = Omit<ModelRequest, "signal" | "onTextDelta" | "onProgress" | "onUsage" | "onRequest">;

export interface ModelResponse {
  content: AssistantBlock[];
  stopReason: ModelStopReason;
  /** The provider's own stop reason string, for logs. */
  rawStopReason: string | null;
  usage: Usage;
  model: string;
  /** The provider's id of the HTTP request (`request-id`, `x-request-id`), when its SDK exposes it. */
  requestId?: string | null;
}

export interface ModelProvider {
  readonly name: ProviderName;
  readonly defaultModel: string;
  /** The host of the server its calls go to (`api.anthropic.com`, `127.0.0.1:8080`): models are cooled down per server. Absent: one server. */
  baseUrlHost?(): string;
  /**
   * One model call, one attempt (no retries). Throws `ProviderError` when the
   * provider fails, and an `AbortError`-like error when `signal` aborts.
   */
  generate(request: ModelRequest): Promise<ModelResponse>;
  /**
   * The request body exactly as `generate` hands it to the provider's SDK
   * (for `GET /conversations/:id/context`, and to rebuild a call from its
   * trace). Pure: the same request gives the same body.
   */
  buildRequest(request: ModelRequestBody): object;
  /**
   * A history exactly as this provider's SDK takes it (system prompt
   * included, in the provider's place for it), for clients that call the
   * provider themselves.
   */
  formatHistory(
    system: string | null,
    messages: readonly NewMessage[],
    attachments?: AttachmentData,
  ): { system?: unknown; messages: unknown[] };
}

/**
 * What a failed model call allows (`classifyProviderError` in
 * providers/shared decides it, in one place): `retryable` (try again after a
 * wait: 408, 409, 429, 5xx, 529, no response, an error inside the stream),
 * `capacity` (this model will not answer soon: a used-up quota; go to the
 * next model at once), `context_window` (the request is too long for this
 * model; the next may take it), `fatal` (the request is wrong: no retry, no
 * fallback).
 */
export type ProviderErrorKind = "retryable" | "capacity" | "context_window" | "fatal";

/** A provider failure, as `ModelProvider.generate` throws it (the SDKs make no retries of their own: loopd's loop does). */
export class ProviderError extends Error {
  override readonly name = "ProviderError";
  /** The HTTP status; null when no response came back (connection, timeout, an error inside the stream). */
  readonly status: number | null;
  /** The provider's own word for the error (`overloaded_error`, `rate_limit_exceeded`, `insufficient_quota`); null when it gave none. */
  readonly type: string | null;
  /** How long the provider asked to wait (`retry-after-ms`, `Retry-After`); null when it did not say. */
  readonly retryAfterMs: number | null;
  readonly kind: ProviderErrorKind;
  constructor(
    message: string,
    {
      status = null,
      type = null,
      retryAfterMs = null,
      kind = "fatal",
      cause,
    }: {
      status?: number | null;
      type?: string | null;
      retryAfterMs?: number | null;
      kind?: ProviderErrorKind;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause });
    this.status = status;
    this.type = type;
    this.retryAfterMs = retryAfterMs;
    this.kind = kind;
  }
}
