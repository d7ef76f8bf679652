import { AppError } from "../errors.js";

/**
 * Bounds the SSE streams one process holds open. Each costs a socket, a
 * follower and its share of the database pool; past the bound a client gets
 * a 503 with Retry-After (and can try another instance) instead of a server
 * that slows down for everyone.
 */
export function createStreamGate({ max }: { max: number }) {
  let open = 0;
  return {
    get open() {
      return open;
    },
    /** Takes a place for a stream (release it when the stream ends), or throws 503 unavailable at the bound. */
    take(): () => void {
      if (open >= max) {
        throw new AppError("unavailable", `this server already holds its maximum of ${max} open streams; try again shortly`, {
          max_streams: max,
        });
      }
      open++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        open--;
      };
    },
  };
}

export type StreamGate = ReturnType<typeof createStreamGate>;
