import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { AppError, describeError, errorBody, findInCauseChain, statusOf, type ErrorCode } from "../errors.js";
import { isDatabaseFault } from "../store/db.js";

/**
 * One response shape for every failure. A client's mistake is a 4xx naming
 * what was wrong; anything else is a 500 (or 503 when the database is away)
 * whose text reveals nothing of the internals.
 */
export function handleError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (clientHungUp(err, request)) {
    // Nobody is left to read the answer, and nothing of ours failed.
    request.log.info({ err: describeError(err) }, "the client closed the connection before its request was complete");
    return reply.code(400).send(errorBody("invalid_request", "the request ended before its body was complete"));
  }
  const { code, message, details } = classify(err);
  const status = statusOf(code);
  if (status >= 500) request.log.error({ err: describeError(err) }, "request failed");
  return reply.code(status).send(errorBody(code, message, details));
}

function classify(err: FastifyError | Error): { code: ErrorCode; message: string; details: Record<string, unknown> } {
  if (err instanceof AppError) return { code: err.code, message: err.message, details: err.details };
  if (hasZodFastifySchemaValidationErrors(err)) {
    const where = (err as FastifyError).validationContext ?? "body";
    const issues = err.validation.map((v) => {
      const path = [where, ...v.instancePath.split("/").filter(Boolean)].join(".");
      // A refinement's params (the limit it enforces) go out with its issue.
      const { params } = v.params as { params?: Record<string, unknown> };
      return { field: path, message: v.message ?? "is invalid", ...params };
    });
    const { field = where, message = "is invalid", ...extra } = issues[0] ?? {};
    return { code: "invalid_request", message: `${field}: ${message}`, details: { field, ...extra, issues } };
  }
  if (isDatabaseUnavailable(err)) return { code: "unavailable", message: "the database is unreachable; try again shortly", details: {} };
  const status = (err as FastifyError).statusCode;
  if (status === 413) return { code: "payload_too_large", message: "request body is larger than the server accepts", details: {} };
  if (status && status >= 400 && status < 500) {
    return { code: "invalid_request", message: (err as FastifyError).message, details: { reason: (err as FastifyError).code ?? "bad_request" } };
  }
  return { code: "internal", message: "internal error: this is a bug in loopd, and it has been logged", details: {} };
}

/** The request's own stream broke off (Node reports it as ECONNRESET "aborted"), which says nothing about the database. */
function clientHungUp(err: Error, request: FastifyRequest): boolean {
  return (err as { code?: unknown }).code === "ECONNRESET" && request.raw.readableAborted;
}

const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "57P01", "57P03", "08000", "08003", "08006"]);

export function isDatabaseUnavailable(err: unknown): boolean {
  return (
    isDatabaseFault(err) ||
    (findInCauseChain(err, (e) => {
      const { code, message } = e as { code?: unknown; message?: unknown };
      if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
      if (typeof message === "string" && UNAVAILABLE_MESSAGE.test(message)) return true;
      return undefined;
    }) ?? false)
  );
}

const UNAVAILABLE_MESSAGE =
  /Connection terminated|connect ECONNREFUSED|PGlite is closed|Cannot use a pool after calling end|timeout exceeded when trying to connect/i;
