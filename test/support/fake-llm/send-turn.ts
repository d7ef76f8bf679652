import type { ServerResponse } from "node:http";
import type { CountedInput } from "./prompt-cache.js";
import { setTimeout as sleep } from "node:timers/promises";
import { type FakeTurn, isErrorTurn, isHangTurn } from "./fake-turn.js";
import { resolveAnswer } from "./resolve-answer.js";
import { formatSseEvent } from "./sse-event.js";
import type { WireApi, WireError } from "./wire-api.js";

const DEFAULT_ERROR_MESSAGES: Record<number, string> = {
  400: "Invalid request",
  401: "invalid x-api-key",
  404: "Not found",
  429: "Number of request tokens has exceeded your per-minute rate limit",
  500: "Internal server error",
  503: "Service unavailable",
  529: "Overloaded",
};

/** Wait `ms`; false when the client went away first. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });

export function sendError({
  api,
  res,
  status,
  error,
  headers = {},
}: {
  api: WireApi;
  res: ServerResponse;
  status: number;
  error: WireError;
  headers?: Record<string, string>;
}): void {
  const requestId = api.newRequestId();
  // A tiny retry-after-ms keeps retries fast in tests, unless the turn names its own wait.
  const named = Object.keys(headers).some((h) => h.toLowerCase().startsWith("retry-after"));
  const retryable = (status === 429 || status >= 500) && !named;
  res.writeHead(status, {
    "content-type": "application/json",
    [api.requestIdHeader]: requestId,
    ...(retryable ? { "retry-after-ms": "5" } : {}),
    ...headers,
  });
  res.end(JSON.stringify(api.errorBody(status, error, requestId)));
}

/** Answer one accepted request with a scripted turn, streaming it when the request asked to. */
export async function sendTurn({
  api,
  res,
  turn,
  body,
  counted,
  defaultChunkDelayMs,
  signal,
}: {
  api: WireApi;
  res: ServerResponse;
  turn: FakeTurn;
  body: Record<string, unknown>;
  /** The request's input tokens as billed; unscripted usage reports them. */
  counted?: CountedInput | undefined;
  defaultChunkDelayMs: number;
  signal: AbortSignal;
}): Promise<void> {
  const stream = body.stream === true;
  if (isErrorTurn(turn)) {
    const message = turn.message ?? DEFAULT_ERROR_MESSAGES[turn.status] ?? `HTTP ${turn.status}`;
    return sendError({ api, res, status: turn.status, error: { message }, headers: turn.headers });
  }
  const headers = stream
    ? { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" }
    : { "content-type": "application/json" };
  if (isHangTurn(turn)) {
    if (stream) {
      res.writeHead(200, { ...headers, [api.requestIdHeader]: api.newRequestId() });
      res.flushHeaders();
    }
    return untilAborted(signal);
  }
  const answer = resolveAnswer({ turn, api: api.name, requestBody: body, counted, defaultChunkDelayMs });
  if (!stream) {
    if (answer.chunkDelayMs > 0 && !(await pause(answer.chunkDelayMs, signal))) return;
    res.writeHead(200, { ...headers, [api.requestIdHeader]: api.newRequestId() });
    res.end(JSON.stringify(api.json(answer)));
    return;
  }
  res.writeHead(200, { ...headers, [api.requestIdHeader]: api.newRequestId() });
  const events = api
    .stream(answer, body)
    .slice(0, answer.truncateAfterChunks ?? answer.stallAfterChunks ?? answer.errorAfterChunks);
  if (answer.errorAfterChunks !== undefined) events.push(api.streamError(answer.streamError ?? {}));
  for (const [i, event] of events.entries()) {
    if (i > 0 && answer.chunkDelayMs > 0 && !(await pause(answer.chunkDelayMs, signal))) return;
    if (signal.aborted) return;
    res.write(formatSseEvent(event));
  }
  if (answer.truncateAfterChunks === undefined && answer.stallAfterChunks !== undefined)
    return stall({ api, res, keepAliveMs: answer.keepAliveMs, signal });
  res.end();
}

/** Holds a stream open with nothing in it but keep-alives (if any) until the client leaves. */
async function stall({
  api,
  res,
  keepAliveMs,
  signal,
}: {
  api: WireApi;
  res: ServerResponse;
  keepAliveMs: number | undefined;
  signal: AbortSignal;
}) {
  if (keepAliveMs === undefined) return untilAborted(signal);
  while (await pause(keepAliveMs, signal)) res.write(api.keepAlive);
}
