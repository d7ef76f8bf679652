/** One server-sent event: Anthropic names each event, OpenAI sends bare `data:` lines. */
export interface SseEvent {
  event?: string;
  /** Already serialised: JSON text, or OpenAI's `[DONE]`. */
  data: string;
}

export function formatSseEvent({ event, data }: SseEvent): string {
  return `${event === undefined ? "" : `event: ${event}\n`}data: ${data}\n\n`;
}

/** Parse an SSE body back into events (for tests and fixtures). */
export function parseSse(body: string): SseEvent[] {
  return body
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const event: SseEvent = { data: "" };
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event: ")) event.event = line.slice("event: ".length);
        else if (line.startsWith("data: ")) data.push(line.slice("data: ".length));
      }
      event.data = data.join("\n");
      return event;
    });
}
