import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { AppError, describeError, errorBody, findInCauseChain, statusOf, type ErrorCode } from "../../errors.js";
import { DatabaseBusyError } from "../../store/busy-reporting-pool.js";
import { isDatabaseFault } from "../../store/embedded-folder.js";
import { validationFailure } from "./validation-failure.js";
import { isOpenAiPath, openAiErrorOf } from "../../openai-api/openai-errors.js";

/** Seconds a client is asked to wait after a 503. */
export const RETRY_AFTER_S = 5;

/** Sends the contract's error body with the status its code decides; a 503 says when to try again. */
export function replyError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> = {},
) {
  const status = statusOf(code);
  if (status === 503) reply.header("retry-after", String(RETRY_AFTER_S));
  // A refusal that knows when it ends (a tenant's daily budget: at 00:00 UTC) says so.
  if (code === "tenant_budget_exhausted" && typeof details.retry_after_s === "number")
    reply.header("retry-after", String(details.retry_after_s));
  // `/v1/*` is OpenAI's API: its error shape, the same status.
  const body = isOpenAiPath(reply.request.url)
    ? openAiErrorOf(code, message, details)
    : errorBody(code, message, details);
  return reply.code(status).send(body);
}

/**
 * One response shape for every failure. A client's mistake is a 4xx naming
 * what was wrong; anything else is a 500 (or 503 when the database is away)
 * whose text reveals nothing of the internals.
 */
export function handleError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (clientHungUp(err, request)) {
    // Nobody is left to read the answer, and nothing of ours failed.
    request.log.info({ err: describeError(err) }, "the client closed the connection before its request was complete");
    return replyError(reply, "invalid_request", "the request ended before its body was complete");
  }
  const { code, message, details = {} } = classify(err, request);
  // A refusal we chose (the process is overloaded) is no failure: one warn line, without a stack.
  if (err instanceof AppError && code === "unavailable") request.log.warn({ code, message }, "request refused");
  else if (statusOf(code) >= 500) request.log.error({ err: describeError(err) }, "request failed");
  return replyError(reply, code, message, details);
}

/** What a busy pool answers: the database is up, every connection loopd holds to it is in use. */
export const DATABASE_BUSY = {
  message:
    "the database is busy: every connection loopd holds to it stayed in use for DB_CONNECT_TIMEOUT_MS; try again shortly",
  details: { reason: "database_busy" },
};

function classify(
  err: FastifyError | Error,
  request: FastifyRequest,
): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
  if (err instanceof AppError) return err;
  if (hasZodFastifySchemaValidationErrors(err)) return { code: "invalid_request", ...validationFailure(err) };
  // A busy pool is not an unreachable database: say which it is.
  if (findInCauseChain(err, (e) => (e instanceof DatabaseBusyError ? true : undefined))) {
    return { code: "unavailable", ...DATABASE_BUSY };
  }
  if (isDatabaseUnavailable(err))
    return { code: "unavailable", message: "the database is unreachable; try again shortly" };
  const { statusCode: status, code } = err as FastifyError;
  if (status === 413) {
    const limit = request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit;
    return {
      code: "payload_too_large",
      message: `the request body is larger than the ${limit} bytes the server accepts`,
      details: { limit },
    };
  }
  if (status === 415) {
    const contentType = request.headers["content-type"] ?? null;
    return {
      code: "unsupported_media_type",
      message: "request bodies must be JSON, sent with Content-Type: application/json",
      details: { content_type: contentType },
    };
  }
  if (code === "FST_ERR_BAD_URL")
    return {
      code: "invalid_request",
      message: "the URL's percent-encoding does not decode to UTF-8 text",
      details: { reason: "bad_url" },
    };
  if (code === "FST_ERR_CTP_INVALID_JSON_BODY")
    return { code: "invalid_request", message: "the body is not valid JSON", details: { field: "body" } };
  if (status && status >= 400 && status < 500)
    return { code: "invalid_request", message: err.message, details: { reason: code ?? "bad_request" } };
  return { code: "internal", message: "internal error: this is a bug in loopd, and it has been logged" };
}

/** The request's own stream broke off (Node reports it as ECONNRESET "aborted"), which says nothing about the database. */
function clientHungUp(err: Error, request: FastifyRequest): boolean {
  return (err as { code?: unknown }).code === "ECONNRESET" && request.raw.readableAborted;
}

// 57014: a statement cancelled (DB_STATEMENT_TIMEOUT_MS); 25P03: a session ended for idling in a transaction.
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "57P01",
  "57P03",
  "57014",
  "25P03",
  "08000",
  "08003",
  "08006",
]);

export function isDatabaseUnavailable(err: unknown): boolean {
  return (
    isDatabaseFault(err) ||
    (findInCauseChain(err, (e) => {
      const { code, message } = e as { code?: unknown; message?: unknown };
      if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
      if (typeof message === "string" && UNAVAILABLE_MESSAGE.test(message)) return true;
      return undefined;
    }) ??
      false)
  );
}

// "timeout exceeded when trying to connect": every pool connection stayed busy for DB_CONNECT_TIMEOUT_MS.
// "is not queryable": the query went to a client whose connection had failed (pg says so without a code).
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connect ECONNREFUSED|PGlite is closed|Cannot use a pool after calling end|timeout exceeded when trying to connect|is not queryable/i;
