import { connect, type Socket } from "node:net";

export interface SlowUpload {
  socket: Socket;
  /** Everything the server wrote, once it closed the connection (or the client did). */
  closed: Promise<{ text: string; status: number | null; body: string }>;
  /** Whether the server has written anything yet. */
  answered(): boolean;
}

/**
 * A request whose headers go out at once and whose body is left for the test
 * to send (`socket.write`), a byte at a time or never: the slow or stalled
 * uploads a server must not wait for nor hold memory for.
 */
export function startUpload(
  baseUrl: string,
  { path, headers }: { path: string; headers: Record<string, string | number> },
): SlowUpload {
  const { port, hostname } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  const closed = new Promise<{ text: string; status: number | null; body: string }>((resolve) => {
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({
        text,
        status: status === undefined ? null : Number(status),
        body: text.slice(text.indexOf("\r\n\r\n") + 4),
      });
    });
  });
  socket.on("error", () => {});
  const lines = [
    `POST ${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    "Content-Type: application/json",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.write(`${lines.join("\r\n")}\r\n\r\n`);
  return { socket, closed, answered: () => chunks.length > 0 };
}
