import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/** In the message of a stream cut past the cap: the server connection tells it by this. */
export const TOO_LONG = "longer than loopd reads";
/** The JSON-RPC error code of a request whose answer stream ended (or broke) before the answer. */
export const CONNECTION_LOST = -32099;
export const CONNECTION_LOST_REASON = "its connection closed before it answered";

const NEWLINE = 10;
const RETURN = 13;

/**
 * Node's fetch, with what an MCP server streams back bounded:
 *
 * - the answer to a POST (one request's) past `maxBytes`: a JSON-RPC error
 *   for the request takes its place (a JSON answer) or ends it (an event
 *   stream), so the request ends at once with that error, not at its timeout;
 * - an event stream that ends or breaks before answering its POST (the
 *   server died): the same, with `CONNECTION_LOST` (unless the stream is
 *   resumable, its events having ids: the SDK asks for the rest);
 * - a GET stream (notifications; every answer, on the old HTTP+SSE
 *   transport): one event past `maxBytes` errors the stream.
 *
 * The SDK ignores an error for a request it already had the answer of, so
 * the added event is harmless after a complete answer.
 */
export function cappedFetch(maxBytes: number): FetchLike {
  return async (url, init) => {
    const res = await fetch(url, init);
    if (!res.body) return res;
    const tooLong = `the server's answer is ${TOO_LONG} (${maxBytes.toLocaleString("en-US")} bytes); ask for less`;
    const isStream = res.headers.get("content-type")?.includes("text/event-stream") ?? false;
    const post = init?.method === "POST";
    if (!post && !isStream) return res;
    const id = post ? requestIdOf(init.body) : undefined;
    if (!isStream) return cappedJson(res, maxBytes, id, tooLong);
    const lines = new LineScanner();
    let seen = 0;
    let resumable = false;
    const reader = res.body.getReader();
    const errorEvent = (code: number, message: string) =>
      new TextEncoder().encode(
        `\n\nevent: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })}\n\n`,
      );
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          if (id === undefined) return controller.error(err);
          controller.enqueue(errorEvent(CONNECTION_LOST, CONNECTION_LOST_REASON));
          return controller.close();
        }
        if (chunk.done) {
          if (id !== undefined && !resumable) controller.enqueue(errorEvent(CONNECTION_LOST, CONNECTION_LOST_REASON));
          return controller.close();
        }
        const bytes = chunk.value;
        seen += bytes.byteLength;
        // A POST's whole answer is one request's; a GET stream's, each event.
        const over = post ? seen > maxBytes : lines.eventBytes(bytes) > maxBytes;
        if (isStream) resumable ||= lines.sawEventId;
        if (!over) return controller.enqueue(bytes);
        void reader.cancel().catch(() => {});
        if (id === undefined) return controller.error(new Error(tooLong));
        controller.enqueue(errorEvent(-32603, tooLong));
        controller.close();
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/**
 * Reads an event stream's lines as they pass, holding nothing: how many
 * bytes the current event has (an empty line ends an event), and whether
 * any event had an `id:` (then the stream can be resumed).
 */
class LineScanner {
  private event = 0;
  private line = 0;
  private lineStart: number[] = [];
  sawEventId = false;

  /** The bytes of the event this chunk ends in (0 when it ends one). */
  eventBytes(chunk: Uint8Array): number {
    let from = 0;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; from = at + 1, at = chunk.indexOf(NEWLINE, from)) {
      const length = this.line + at - from - (at > 0 && chunk[at - 1] === RETURN ? 1 : 0);
      this.noteStart(chunk, from, at);
      this.event = length === 0 ? 0 : this.event + length + 1;
      this.line = 0;
      this.lineStart = [];
    }
    this.noteStart(chunk, from, chunk.length);
    this.line += chunk.length - from;
    return this.event + this.line;
  }

  /** Keeps a line's first bytes, to see `id:`. */
  private noteStart(chunk: Uint8Array, from: number, to: number): void {
    for (let i = from; i < to && this.lineStart.length < 3; i++) this.lineStart.push(chunk[i]!);
    if (
      this.lineStart.length === 3 &&
      this.lineStart[0] === 0x69 &&
      this.lineStart[1] === 0x64 &&
      this.lineStart[2] === 0x3a
    )
      this.sawEventId = true;
  }
}

/** A JSON answer, read whole up to `maxBytes`; past it, a JSON-RPC error for the request in its place (or, with no id, an answer that fails to read). */
async function cappedJson(
  res: Response,
  maxBytes: number,
  id: string | number | undefined,
  tooLong: string,
): Promise<Response> {
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value.byteLength;
    if (seen > maxBytes) {
      void reader.cancel().catch(() => {});
      if (id === undefined) throw new Error(tooLong);
      const headers = new Headers(res.headers);
      headers.delete("content-length");
      return new Response(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: tooLong } }), {
        status: res.status,
        statusText: res.statusText,
        headers,
      });
    }
    chunks.push(value);
  }
  return new Response(Buffer.concat(chunks), { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** The id of the one JSON-RPC request a POST carries. */
function requestIdOf(body: unknown): string | number | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown };
    return typeof message.method === "string" && (typeof message.id === "string" || typeof message.id === "number")
      ? message.id
      : undefined;
  } catch {
    return undefined;
  }
}
