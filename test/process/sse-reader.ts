export interface SseEvent {
  id: number | null;
  event: string;
  /** The parsed `data:` JSON. `any` because tests dig into each event type's own shape. */
  data: any;
}

/** How a stream stopped: the server ended the response, or the connection broke. */
export type SseEnd = { kind: "ended" } | { kind: "broken"; error: unknown };

export interface SseReader {
  status: number;
  contentType: string | null;
  /** Every event read so far, in order. */
  events: SseEvent[];
  /** Reads until `matches` holds for an event, which it returns. Throws if the stream stops first or after `timeoutMs`. */
  until(matches: (e: SseEvent) => boolean, timeoutMs: number): Promise<SseEvent>;
  /** Reads to the end of the stream. Throws after `timeoutMs`: a stream that never ends. */
  rest(timeoutMs: number): Promise<SseEnd>;
  close(): void;
}

/** A minimal Server-Sent Events client over fetch, enough to assert on loopd's streams. */
export async function openSse(url: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<SseReader> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers: { accept: "text/event-stream", ...(init.body !== undefined && { "content-type": "application/json" }), ...init.headers },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = "";
  let end: SseEnd | null = null;

  /** The next event, or null once the stream stopped. */
  async function next(): Promise<SseEvent | null> {
    for (;;) {
      const cut = buffer.indexOf("\n\n");
      if (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = parseBlock(block);
        if (event) {
          events.push(event);
          return event;
        }
        continue;
      }
      if (end) return null;
      try {
        const { done, value } = await reader.read();
        if (done) end = { kind: "ended" };
        else buffer += decoder.decode(value, { stream: true });
      } catch (error) {
        end = { kind: "broken", error };
      }
    }
  }

  async function within<T>(timeoutMs: number, what: string, work: () => Promise<T>): Promise<T> {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const timeoutError = () => new Error(`${what} within ${timeoutMs} ms; events so far: ${events.map((e) => e.event).join(", ")}`);
    try {
      const value = await work();
      if (timedOut) throw timeoutError();
      return value;
    } catch (error) {
      throw timedOut ? timeoutError() : error;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    events,
    until: (matches, timeoutMs) =>
      within(timeoutMs, "no matching event", async () => {
        for (let e = await next(); e; e = await next()) if (matches(e)) return e;
        throw new Error(`the stream stopped (${end?.kind}) before a matching event; events: ${events.map((x) => x.event).join(", ")}`);
      }),
    rest: (timeoutMs) =>
      within(timeoutMs, "the stream did not end", async () => {
        while (await next());
        return end!;
      }),
    close: () => controller.abort(),
  };
}

function parseBlock(block: string): SseEvent | null {
  let id: number | null = null;
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue; // a comment: `: ping`
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = Number(value);
    else if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return null;
  return { id, event, data: JSON.parse(data.join("\n")) };
}
