import { once } from "node:events";
import type { FastifyReply } from "fastify";
import { openEventStream } from "./sse.js";

export interface StreamFramesOptions {
  /** What to send, each frame one SSE `data:` event of JSON. */
  frames: AsyncGenerator<unknown>;
  /** A failure as a frame: before the first frame it is the JSON answer, after it an `event: error`. */
  errorOf: (err: unknown) => unknown;
  /** Aborts when the client leaves. */
  gone: AbortSignal;
  /** @default 15000 */
  pingMs?: number;
  /** Called once the stream has ended (its place in the stream gate). */
  release?: () => void;
  /** A failure before the first frame that the route answers itself (thrown: its status, not a frame). */
  refusal?: () => Error | undefined;
}

/**
 * Sends frames as Server-Sent Events (another protocol's, A2A's JSON-RPC
 * responses), with the socket's backpressure respected and a ping while
 * nothing comes. The frames' source stops itself when the client leaves or
 * the server stops (it is given the same signals); this ends with it.
 */
export async function streamFrames(
  reply: FastifyReply,
  { frames, errorOf, gone, pingMs = 15_000, release = () => {}, refusal = () => undefined }: StreamFramesOptions,
): Promise<void> {
  let first: IteratorResult<unknown>;
  try {
    first = await frames.next();
  } catch (err) {
    release();
    const refused = refusal();
    if (refused) throw refused;
    void reply.code(200).send(errorOf(err));
    return;
  }
  const res = openEventStream(reply);
  res.flushHeaders();
  const ping = setInterval(() => res.write(": ping\n\n"), pingMs);
  const write = async (text: string) => {
    if (!res.write(text)) await once(res, "drain", { signal: gone }).catch(() => {});
  };
  try {
    for (let next = first; !next.done && !gone.aborted; next = await frames.next())
      await write(`data: ${JSON.stringify(next.value)}\n\n`);
  } catch (err) {
    if (!gone.aborted) await write(`event: error\ndata: ${JSON.stringify(errorOf(err))}\n\n`);
  } finally {
    await frames.return(undefined).catch(() => {});
    clearInterval(ping);
    res.end();
    release();
  }
}
