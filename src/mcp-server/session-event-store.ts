import type { EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * A session's resumability (Streamable HTTP's `Last-Event-ID`): the last
 * messages it sent, at most `max` of them and `maxBytes` of JSON together
 * (the newest two are always kept), in this process's memory. A client whose
 * stream broke reconnects and gets what it missed; a session outlives
 * neither the process nor the bounds (older messages are dropped, and a
 * resume from one of them replays nothing).
 */
export function createSessionEventStore({
  max = 1000,
  maxBytes = 4 * 1024 * 1024,
}: { max?: number; maxBytes?: number } = {}): EventStore {
  const events: { id: string; streamId: string; message: JSONRPCMessage; bytes: number }[] = [];
  let bytes = 0;
  let next = 0;
  const indexOf = (id: string) => events.findIndex((e) => e.id === id);
  return {
    async storeEvent(streamId, message) {
      const id = `${streamId}:${(next++).toString(36)}`;
      const size = JSON.stringify(message).length;
      events.push({ id, streamId, message, bytes: size });
      bytes += size;
      // The newest is kept whatever its size, and the one before it, which a resume to get it names.
      while (events.length > max || (events.length > 2 && bytes > maxBytes)) bytes -= events.shift()!.bytes;
      return id;
    },
    async getStreamIdForEventId(eventId) {
      return events[indexOf(eventId)]?.streamId;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const at = indexOf(lastEventId);
      if (at < 0) return "";
      const { streamId } = events[at]!;
      for (const event of events.slice(at + 1)) if (event.streamId === streamId) await send(event.id, event.message);
      return streamId;
    },
  };
}
