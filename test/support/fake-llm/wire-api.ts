import type { ResolvedAnswer } from "./resolve-answer.js";
import type { SseEvent } from "./sse-event.js";

export interface WireError {
  message: string;
  param?: string | null;
  code?: string | null;
}

/** What the server needs to know about one LLM API to answer it. */
export interface WireApi {
  name: "anthropic" | "openai";
  requestIdHeader: string;
  newRequestId(): string;
  /** The first reason the real API would answer 400, or null. */
  validate(body: unknown): WireError | null;
  errorBody(status: number, error: WireError, requestId: string): unknown;
  json(answer: ResolvedAnswer): unknown;
  stream(answer: ResolvedAnswer, body: Record<string, unknown>): SseEvent[];
  /** The event the API sends when it fails inside a stream (after which the stream ends). */
  streamError(error: { type?: string | undefined; message?: string | undefined }): SseEvent;
  /** The raw SSE text the API sends to keep an idle stream open. */
  keepAlive: string;
}
