import { once } from "node:events";
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";

export interface RoundRobinProxy {
  url: string;
  close(): Promise<void>;
}

/** Headers about one connection, not the message: never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
]);

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  // The ones the Connection header names are hop-by-hop too.
  const named = new Set(
    String(headers.connection ?? "")
      .toLowerCase()
      .split(",")
      .map((name) => name.trim()),
  );
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) kept[name] = value;
  }
  return kept;
}

/** How long a target that refused a connection is left out before it is tried again. */
const DOWN_FOR_MS = 5_000;
/** A request body the proxy holds (to send it again to another target): bounded. */
const MAX_BODY_BYTES = 1 << 20;

/**
 * Several servers (loopd processes on one database) behind one URL, as a
 * load balancer puts them: each request goes to the next target in turn,
 * its response piped back as it comes, so SSE flows event by event. A
 * client that hangs up cancels its upstream request (the server then sees
 * the disconnect, as it would without the proxy). A target that refuses the
 * connection (its process died) is left out for DOWN_FOR_MS and the request
 * goes to the next one, as a load balancer's passive health check does
 * (nginx's `proxy_next_upstream error`): the request had not reached it. A
 * connection cut after that is the client's to see. `onForward` is told
 * which target each request went to.
 */
export async function startRoundRobinProxy(
  targets: string[],
  { onForward }: { onForward?: (request: { method: string; url: string }, target: string) => void } = {},
): Promise<RoundRobinProxy> {
  if (targets.length === 0) throw new Error("startRoundRobinProxy: no targets");
  const upstreams = targets.map((target) => ({ url: new URL(target), downUntil: 0 }));
  // Keep-alive with no cap: 500+ streams at once each hold a socket, and the
  // ones freed after a round are kept for the next instead of reconnected.
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4096, noDelay: true });
  let next = 0;
  const pick = () => {
    const now = Date.now();
    for (let tried = 0; tried < upstreams.length; tried++) {
      const target = upstreams[next++ % upstreams.length]!;
      if (target.downUntil <= now) return target;
    }
    return upstreams[next++ % upstreams.length]!;
  };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, triesLeft: number) => {
    const target = pick();
    onForward?.({ method: req.method ?? "GET", url: req.url ?? "/" }, target.url.origin);
    const upstream = httpRequest({
      agent,
      protocol: target.url.protocol,
      hostname: target.url.hostname,
      port: target.url.port,
      method: req.method,
      path: `${target.url.pathname.replace(/\/+$/, "")}${req.url ?? "/"}`,
      headers: { ...endToEnd(req.headers), host: target.url.host, "content-length": String(body.length) },
    });
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
      res.flushHeaders(); // an SSE stream's headers go out before its first event
      // pipe writes each chunk as it arrives: nothing is held back in between.
      answer.pipe(res);
      // An upstream cut off mid-answer: cut the client off too, not a clean end it would take for the whole answer.
      answer.on("error", () => res.destroy());
      answer.on("close", () => {
        if (!answer.complete) res.destroy();
      });
    });
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      if (res.headersSent) return void res.destroy();
      if (error.code === "ECONNREFUSED" && triesLeft > 0) {
        target.downUntil = Date.now() + DOWN_FOR_MS;
        return forward(req, res, body, triesLeft - 1);
      }
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `proxy: ${target.url.host}: ${error.message}` }));
    });
    // Closed before it was all sent: the client is gone, and so should its upstream request be.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  };

  const server = createServer({ noDelay: true }, (req, res) => {
    req.on("error", () => {});
    res.on("error", () => {}); // the client hung up: the close handler cleans up
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ error: "proxy: body over 1 MiB" }));
      }
      forward(req, res, Buffer.concat(chunks), upstreams.length - 1);
    });
  });
  // As Fastify's default (loopd's): a client between two rounds keeps its connections.
  server.keepAliveTimeout = 72_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}
