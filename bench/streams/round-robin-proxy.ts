import { once } from "node:events";
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
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

/**
 * Several servers (two loopd processes on one database) behind one URL, as a
 * load balancer puts them: each request goes to the next target in turn,
 * its body piped up and its response piped back as it comes, so SSE flows
 * event by event. A client that hangs up cancels its upstream request (the
 * server then sees the disconnect, as it would without the proxy); an
 * upstream that cannot be reached answers 502.
 */
export async function startRoundRobinProxy(targets: string[]): Promise<RoundRobinProxy> {
  if (targets.length === 0) throw new Error("startRoundRobinProxy: no targets");
  const upstreams = targets.map((target) => new URL(target));
  // Keep-alive with no cap: 500+ streams at once each hold a socket, and the
  // ones freed after a round are kept for the next instead of reconnected.
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4096, noDelay: true });
  let next = 0;

  const server = createServer({ noDelay: true }, (req, res) => {
    const target = upstreams[next++ % upstreams.length]!;
    req.on("error", () => {});
    res.on("error", () => {}); // the client hung up: the close handler below cleans up
    const upstream = httpRequest({
      agent,
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      method: req.method,
      path: `${target.pathname.replace(/\/+$/, "")}${req.url ?? "/"}`,
      headers: { ...endToEnd(req.headers), host: target.host },
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
    upstream.on("error", (error) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `proxy: ${target.host}: ${error.message}` }));
    });
    // Closed before it was all sent: the client is gone, and so should its upstream request be.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
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
