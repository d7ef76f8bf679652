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
  /**
   * One model call. Throws `ProviderError` when the provider fails after the
   * SDK's own retries, and an `AbortError`-like error when `signal` aborts.
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

/** A provider failure that survived the SDK's retries. */
export class ProviderError extends Error {
  override readonly name = "ProviderError";
  readonly status: number | null;
  constructor(message: string, { status = null, cause }: { status?: number | null; cause?: unknown } = {}) {
    super(message, { cause });
    this.status = status;
  }
}
