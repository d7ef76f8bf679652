import { A2AError, RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { AppError, statusOf } from "../errors.js";
import type { Log } from "../services.js";

/**
 * A failure as the A2A SDK answers it: loopd's client errors keep their
 * message, and their code in the error's metadata (`loopd_code`); a bug
 * becomes "internal error" with nothing of its internals, and is logged.
 */
export function toA2AError(err: unknown, log: Pick<Log, "error">): Error {
  if (err instanceof A2AError) return err;
  if (err instanceof AppError) {
    const options = { message: err.message, metadata: { loopd_code: err.code } };
    const status = statusOf(err.code);
    if (err.code === "not_found") return new TaskNotFoundError(options);
    if (err.code === "invalid_request") return new RequestMalformedError(options);
    // Busy, limits, an archived agent: refused as asked, the message says why.
    if (status < 500) return new UnsupportedOperationError(options);
    return new Error(err.code === "internal" ? "internal error" : err.message);
  }
  log.error({ err }, "A2A request failed");
  return new Error("internal error");
}

/** `fn`, its failures turned into A2A errors. */
export async function guarded<T>(log: Pick<Log, "error">, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toA2AError(err, log);
  }
}

/** A generator whose failures are A2A errors. */
export async function* guardedStream<T>(log: Pick<Log, "error">, stream: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* stream;
  } catch (err) {
    throw toA2AError(err, log);
  }
}
