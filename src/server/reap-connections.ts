import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * What a stopping server drops so that `close()` ends once the requests under
 * way have: the keep-alive connections idle between requests
 * (`closeIdleConnections`), and the connections that never sent a byte.
 * Node counts a connection as busy from the moment it opens (its headers
 * timeout runs from then), so `closeIdleConnections` leaves one that never
 * sent a request, and `close()` waits until the client drops it or Node's
 * request timeouts end it, a minute or more. HTTP clients open such
 * connections: undici (Node's fetch, the `openai` SDK) opens a spare one when
 * a request is aborted, and may never use it. Made before
 * listening; `reap` as often as the caller likes once stopping.
 */
export function connectionReaper(server: Server): { reap(): void } {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return {
    reap: () => {
      server.closeIdleConnections();
      for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
    },
  };
}
