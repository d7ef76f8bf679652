import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

/**
 * Node's fetch, with the answer to a POST (one request's result) cut off
 * past `maxBytes` instead of buffering a 50 MB result. A JSON answer fails
 * to read, which fails its request; an event stream ends with a JSON-RPC
 * error for the request it answers, so that request ends at once rather
 * than at its timeout. Other answers (the long-lived GET stream of
 * notifications) pass as they are.
 */
export function cappedFetch(maxBytes: number): FetchLike {
  return async (url, init) => {
    const res = await fetch(url, init);
    if (init?.method !== "POST" || !res.body) return res;
    const tooLong = `the server's answer is longer than loopd reads (${maxBytes.toLocaleString("en-US")} bytes); ask for less`;
    const stream = res.headers.get("content-type")?.includes("text/event-stream") ?? false;
    const id = stream ? requestIdOf(init.body) : undefined;
    let seen = 0;
    const cap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen <= maxBytes) return controller.enqueue(chunk);
        if (id === undefined) return controller.error(new Error(tooLong));
        // Blank lines end the event that was cut; then the error, as the server would have sent it.
        const error = JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: tooLong } });
        controller.enqueue(new TextEncoder().encode(`\n\nevent: message\ndata: ${error}\n\n`));
        controller.terminate();
      },
    });
    return new Response(res.body.pipeThrough(cap), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** The id of the one JSON-RPC request a POST carries. */
function requestIdOf(body: unknown): string | number | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown };
    return typeof message.method === "string" && (typeof message.id === "string" || typeof message.id === "number") ? message.id : undefined;
  } catch {
    return undefined;
  }
}
