import { isEvent, readSse, type SseEvent } from "../support/helpers/sse-client.js";

export type { SseEvent };

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
export async function openSse(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<SseReader> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers: {
      accept: "text/event-stream",
      ...(init.body !== undefined && { "content-type": "application/json" }),
      ...init.headers,
    },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    signal: controller.signal,
  });
  const items = readSse(res);
  const events: SseEvent[] = [];
  let end: SseEnd | null = null;

  /** The next event, or null once the stream stopped. */
  async function next(): Promise<SseEvent | null> {
    while (!end) {
      try {
        const { done, value } = await items.next();
        if (done) end = { kind: "ended" };
        else if (isEvent(value)) {
          events.push(value);
          return value;
        }
      } catch (error) {
        end = { kind: "broken", error };
      }
    }
    return null;
  }

  async function within<T>(timeoutMs: number, what: string, work: () => Promise<T>): Promise<T> {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const timeoutError = () =>
      new Error(`${what} within ${timeoutMs} ms; events so far: ${events.map((e) => e.event).join(", ")}`);
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
        throw new Error(
          `the stream stopped (${end?.kind}) before a matching event; events: ${events.map((x) => x.event).join(", ")}`,
        );
      }),
    rest: (timeoutMs) =>
      within(timeoutMs, "the stream did not end", async () => {
        while (await next());
        return end!;
      }),
    close: () => controller.abort(),
  };
}
