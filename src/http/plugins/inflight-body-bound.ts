import { PassThrough, type Readable } from "node:stream";
import type { FastifyInstance, FastifyReply } from "fastify";
import { AppError } from "../../errors.js";
import { createInflightBodyBytes, type InflightBodyBytes, type InflightRefusal } from "./inflight-body-bytes.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The bytes of request bodies being received now (`MAX_INFLIGHT_BODY_BYTES`). */
    inflightBodies: InflightBodyBytes;
  }
}

/**
 * Bounds the bytes of request bodies being received at once, in all and per
 * key (`MAX_INFLIGHT_BODY_BYTES`, `MAX_INFLIGHT_BODY_BYTES_PER_KEY`): a body
 * is counted by its Content-Length before a byte is read (a declared upload
 * that would pass a bound is refused at once) and by the bytes that arrive
 * (a chunked one has no length), and released once it is in, or its request
 * failed or was dropped. A refusal is `503` with `Retry-After`, and the
 * connection is closed so the rest of the upload is never read. Runs after
 * the key check (its hook is `preParsing`), so the key is known.
 */
export function useInflightBodyBound(app: FastifyInstance, { total, perKey }: { total: number; perKey: number }): void {
  const bodies = createInflightBodyBytes({ total, perKey });
  app.decorate("inflightBodies", bodies);
  app.addHook("preParsing", async (req, reply, payload) => {
    // Neither header: Node reads no body at all.
    if (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined) return payload;
    const key = req.keyId ?? req.tenant;
    const declared = Number(req.headers["content-length"]);
    // Past the route's limit, Fastify answers 413 without reading it: nothing to hold.
    const upFront =
      Number.isSafeInteger(declared) && declared <= (req.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY)
        ? declared
        : 0;
    const reservation = bodies.reserve(key, upFront);
    if ("refused" in reservation) throw refuse(reply, reservation);
    const release = () => reservation.release();
    // However the request ends: its body in, refused, aborted, timed out.
    req.raw.once("close", release);
    reply.raw.once("close", release);
    // Closed while an earlier hook (the key check) ran: no "close" is coming.
    if (req.raw.destroyed || reply.raw.destroyed) release();
    let received = 0;
    let covered = upFront;
    const counted = new PassThrough();
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= covered) return;
      const refused = reservation.grow(received - covered);
      if (!refused) {
        covered = received;
        return;
      }
      payload.off("data", onData);
      payload.unpipe(counted);
      payload.pause();
      counted.destroy(refuse(reply, refused));
    };
    payload.on("data", onData);
    payload.once("end", release);
    payload.once("error", (err) => counted.destroy(err));
    payload.pipe(counted);
    return counted as Readable;
  });
}

function refuse(reply: FastifyReply, { refused, limit }: InflightRefusal): AppError {
  // The rest of the body is not read: the connection ends with the answer.
  reply.header("connection", "close");
  const whose = refused === "key" ? "this API key's request bodies" : "request bodies";
  const variable = refused === "key" ? "MAX_INFLIGHT_BODY_BYTES_PER_KEY" : "MAX_INFLIGHT_BODY_BYTES";
  return new AppError(
    "unavailable",
    `${whose} being received at once would pass ${limit} bytes (${variable}); try again shortly`,
    {
      reason: "inflight_body_bytes",
      scope: refused,
      limit,
    },
  );
}
