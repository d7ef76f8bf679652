/**
 * What a test scripts the fake LLM to answer. One FIFO queue of these is
 * shared by the Anthropic and the OpenAI routes.
 */

export interface FakeToolCall {
  /** @default a realistic generated id (`toolu_01…` or `call_…`) */
  id?: string;
  name: string;
  /** @default {} */
  input?: Record<string, unknown>;
  /**
   * Sent verbatim instead of `JSON.stringify(input)`: OpenAI's `arguments`,
   * Anthropic's `partial_json` pieces. Lets a test send invalid JSON.
   */
  rawArguments?: string;
}

export type FakeStop =
  "end" | "tool" | "max_tokens" | "refusal" | "content_filter" | "pause_turn" | "context_window_exceeded";

export interface FakeUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface FakeAnswerTurn {
  text?: string;
  toolCalls?: FakeToolCall[];
  /** @default "tool" when toolCalls is non-empty, else "end" */
  stop?: FakeStop;
  /** Missing fields default to rough estimates of the request and the answer. */
  usage?: Partial<FakeUsage>;
  /** Delay between streamed chunks; a JSON answer waits it once. @default the server's */
  chunkDelayMs?: number;
  /** @default the request's `model` */
  model?: string;
  /**
   * Streamed answers only: after this many events the stream stalls, the
   * connection held open until the client leaves, as a stuck upstream does.
   */
  stallAfterChunks?: number;
  /**
   * While stalled, send the API's keep-alive this often: Anthropic's `ping`
   * event, or the `: keep-alive` comment line OpenAI-compatible servers send
   * (both SDKs drop them). Unset: nothing at all.
   */
  keepAliveMs?: number;
  /**
   * Streamed answers only: end the response cleanly after this many events,
   * before the stream's own end (no `message_stop`; no `finish_reason`, no
   * `[DONE]`), as a proxy that cuts a connection does.
   */
  truncateAfterChunks?: number;
  /**
   * Streamed answers only: after this many events the API reports an error
   * inside the stream and ends it, as both do when they fail mid-answer:
   * Anthropic's `event: error` (`{"type":"error","error":{"type":"overloaded_error",…}}`),
   * an OpenAI chunk holding only `{"error":{…}}`.
   */
  errorAfterChunks?: number;
  /** The error `errorAfterChunks` sends. @default Anthropic's overloaded_error "Overloaded" / OpenAI's server_error */
  streamError?: { type?: string; message?: string };
}

/** An error answer in the API's own error body. */
export interface FakeErrorTurn {
  status: number;
  message?: string;
  headers?: Record<string, string>;
}

/** Accept the request (send headers if streaming) and then nothing until the client leaves. */
export interface FakeHangTurn {
  hang: true;
}

export type FakeTurn = FakeAnswerTurn | FakeErrorTurn | FakeHangTurn;

export function isErrorTurn(turn: FakeTurn): turn is FakeErrorTurn {
  return typeof (turn as FakeErrorTurn).status === "number";
}

export function isHangTurn(turn: FakeTurn): turn is FakeHangTurn {
  return (turn as FakeHangTurn).hang === true;
}
