import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { AppError, describeError, errorBody, findInCauseChain, statusOf, type ErrorCode } from "../errors.js";

/**
 * One response shape for every failure. A client's mistake is a 4xx naming
 * what was wrong; anything else is a 500 (or 503 when the database is away)
 * whose text reveals nothing of the internals.
 */
export function handleError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  const { code, message, details } = classify(err);
  const status = statusOf(code);
  if (status >= 500) request.log.error({ err: describeError(err) }, "request failed");
  if (status === 503) reply.header("retry-after", String(RETRY_AFTER_S));
  return reply.code(status).send(errorBody(code, message, details));
}

/** What a 503 asks a client to wait: long enough for a saturated pool to drain, short enough not to matter. */
const RETRY_AFTER_S = 2;

function classify(err: FastifyError | Error): { code: ErrorCode; message: string; details: Record<string, unknown> } {
  if (err instanceof AppError) return { code: err.code, message: err.message, details: err.details };
  if (hasZodFastifySchemaValidationErrors(err)) {
    const where = (err as FastifyError).validationContext ?? "body";
    const issues = err.validation.map((v) => {
      const path = [where, ...v.instancePath.split("/").filter(Boolean)].join(".");
      return { field: path, message: v.message ?? "is invalid" };
    });
    const first = issues[0];
    return {
      code: "invalid_request",
      message: first ? `${first.field}: ${first.message}` : `invalid ${where}`,
      details: { field: first?.field ?? where, issues },
    };
  }
  if (isDatabaseUnavailable(err)) return { code: "unavailable", message: "the database is unreachable; try again shortly", details: {} };
  const status = (err as FastifyError).statusCode;
  if (status === 413) return { code: "payload_too_large", message: "request body is larger than the server accepts", details: {} };
  if (status && status >= 400 && status < 500) {
    return { code: "invalid_request", message: (err as FastifyError).message, details: { reason: (err as FastifyError).code ?? "bad_request" } };
  }
  return { code: "internal", message: "internal error: this is a bug in loopd, and it has been logged", details: {} };
}

// 57014: a statement cancelled (DB_STATEMENT_TIMEOUT_MS); 25P03: a session ended for idling in a transaction.
const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "57P01", "57P03", "57014", "25P03", "08000", "08003", "08006"]);

export function isDatabaseUnavailable(err: unknown): boolean {
  return (
    findInCauseChain(err, (e) => {
      const { code, message } = e as { code?: unknown; message?: unknown };
      if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
      if (typeof message === "string" && UNAVAILABLE_MESSAGE.test(message)) return true;
      return undefined;
    }) ?? false
  );
}

// "timeout exceeded when trying to connect": every pool connection stayed busy for DB_CONNECT_TIMEOUT_MS.
// "is not queryable": the query went to a client whose connection had failed (pg says so without a code).
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connect ECONNREFUSED|PGlite is closed|Cannot use a pool after calling end|timeout exceeded when trying to connect|is not queryable/i;
