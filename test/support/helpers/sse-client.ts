export interface SseEvent {
  id: number;
  event: string;
  data: any;
}

export type SseItem = SseEvent | { comment: string };

/** Parses a Server-Sent Events body as it arrives, one item per event or comment line. */
export async function* readSse(res: Response): AsyncGenerator<SseItem> {
  if (!res.body) return;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) {
            yield { comment: line.slice(1).trim() };
            continue;
          }
          const i = line.indexOf(":");
          if (i > 0) fields[line.slice(0, i)] = line.slice(i + 1).replace(/^ /, "");
        }
        if (fields.event) yield { id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data ?? "null") };
      }
    }
  } finally {
    reader.releaseLock();
    await res.body.cancel().catch(() => {});
  }
}

export const isEvent = (item: SseItem): item is SseEvent => "event" in item;

/** Every event until the stream ends, each handed to `onEvent` as it arrives. */
export async function collectEvents(res: Response, onEvent: (e: SseEvent) => void = () => {}): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const item of readSse(res)) {
    if (!isEvent(item)) continue;
    events.push(item);
    onEvent(item);
  }
  return events;
}
