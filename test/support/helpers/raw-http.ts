import { connect } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  statusCode: number;
  json(): any;
}

/**
 * Writes `request` to a fresh socket as raw bytes, so that tests can send what
 * no HTTP client would (bad URLs, oversized headers, broken request lines),
 * and reads one response back.
 */
export async function rawRequest(baseUrl: string, request: string | Buffer): Promise<RawResponse> {
  const { port, hostname } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    const finish = () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return reject(new Error(`no HTTP response: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
      );
      const length = Number(headers["content-length"] ?? Number.NaN);
      const rest = Buffer.concat(chunks).subarray(Buffer.byteLength(text.slice(0, end + 4)));
      const body = (Number.isNaN(length) ? rest : rest.subarray(0, length)).toString("utf8");
      const status = Number(statusLine!.split(" ")[1]);
      socket.destroy();
      resolve({ status, statusCode: status, headers, body, json: () => JSON.parse(body) });
    };
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      // A complete response with a Content-Length: no need to wait for the close.
      const text = Buffer.concat(chunks).toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end))?.[1];
      if (end >= 0 && length !== undefined && text.length - end - 4 >= Number(length)) finish();
    });
    socket.on("end", finish);
    socket.on("error", (err) => (chunks.length > 0 ? finish() : reject(err)));
    socket.write(request);
  });
}
