import WebSocket from "ws";

export type SocketMessage = Record<string, unknown> & { type: string };

/** How a turn ends: the spec's terminal events, or an error event. */
const LAST = new Set(["response.completed", "response.incomplete", "response.failed", "error"]);

export interface ResponseSocket {
  socket: WebSocket;
  /** Sends a message: an object as JSON, a string as it is. */
  send(message: object | string): void;
  /** The next message the server sends. */
  next(): Promise<SocketMessage>;
  /** Sends a `response.create` with these fields and reads up to its terminal event or error. */
  create(fields: Record<string, unknown>): Promise<SocketMessage[]>;
  /** Every message up to the next terminal event or error. */
  turn(): Promise<SocketMessage[]>;
  /** Resolves with the close code and reason once the socket has closed. */
  closed: Promise<{ code: number; reason: string }>;
}

/** A real WebSocket client on loopd's `/v1/responses` (OpenAI's WebSocket mode), reading the server's messages in order. */
export async function openResponseSocket(baseUrl: string, key?: string): Promise<ResponseSocket> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v1/responses`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
  });
  const queue: SocketMessage[] = [];
  const waiting: ((m: SocketMessage) => void)[] = [];
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as SocketMessage;
    const waiter = waiting.shift();
    if (waiter) waiter(message);
    else queue.push(message);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once("close", (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const next = () =>
    new Promise<SocketMessage>((resolve, reject) => {
      const queued = queue.shift();
      if (queued) return resolve(queued);
      waiting.push(resolve);
      void closed.then(({ code }) => reject(new Error(`the socket closed (${code}) before a message came`)));
    });
  const turn = async () => {
    const messages: SocketMessage[] = [];
    for (;;) {
      const message = await next();
      messages.push(message);
      if (LAST.has(message.type)) return messages;
    }
  };
  const send = (message: object | string) =>
    socket.send(typeof message === "string" ? message : JSON.stringify(message));
  return {
    socket,
    send,
    next,
    turn,
    create: (fields) => {
      send({ type: "response.create", ...fields });
      return turn();
    },
    closed,
  };
}

/**
 * The upgrade refused: the HTTP status loopd answered instead of switching
 * protocols, once the server has closed the connection (a refused upgrade's
 * connection is read by no parser any more; left open, it would never end).
 */
export function refusedUpgrade(baseUrl: string, headers: Record<string, string> = {}): Promise<number> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v1/responses`, { headers });
  return new Promise((resolve, reject) => {
    socket.once("unexpected-response", (req, res) => {
      res.resume();
      const connection = req.socket;
      if (!connection || connection.destroyed) resolve(res.statusCode ?? 0);
      else connection.once("close", () => resolve(res.statusCode ?? 0));
    });
    socket.once("open", () => reject(new Error("the upgrade went through")));
    socket.once("error", () => {});
  });
}
