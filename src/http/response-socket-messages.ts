import type { FastifyBaseLogger } from "fastify";
import type { RawData } from "ws";
import { AppError, describeError, statusOf, type ErrorCode } from "../errors.js";
import { createResponseBody, type CreateResponseBody } from "../openai-api/responses/create-response-body.js";
import { openAiError, openAiErrorOf } from "../openai-api/openai-errors.js";
import { isDatabaseUnavailable } from "./plugins/error-handler.js";
import { validationFailure } from "./plugins/validation-failure.js";
import { fieldNestedDeeperThan } from "./plugins/json-nesting.js";
import { BODY_MAX_DEPTH } from "./schemas/shared.js";

/**
 * The messages of a WebSocket of `/v1/responses` (`response-socket.ts`) as
 * values: a client's `response.create` checked as `POST /v1/responses`'
 * body, and the error events the socket sends.
 */
export const bad = (message: string, param: string | null = null) =>
  openAiError("invalid_request", message, { param, openaiCode: null });

/** The error event a socket gets at the end of its life (`lifeMs`). */
export const lifeSpent = (lifeMs: number) =>
  openAiError(
    "invalid_request",
    `this WebSocket reached the longest a socket stays open (${lifeMs >= 60_000 ? `${Math.round(lifeMs / 60_000)} minutes` : `${lifeMs / 1000} s`}): open a new one and go on (previous_response_id carries a stored response's context over)`,
    { param: null, openaiCode: "websocket_connection_limit_reached" },
  );

/** A client message as a create body: JSON, of type `response.create`, valid as `POST /v1/responses`' body. */
export function createOf(data: RawData, isBinary: boolean): CreateResponseBody {
  let message: unknown;
  const text = isBinary ? null : data.toString();
  // As a request body's: deeper text is refused before it is parsed (the validators walk values recursively).
  const field = text === null ? null : fieldNestedDeeperThan(text, BODY_MAX_DEPTH);
  if (field !== null)
    throw new AppError(
      "invalid_request",
      `${field}: nested deeper than the ${BODY_MAX_DEPTH} levels a request body may have`,
      { field, limit: BODY_MAX_DEPTH },
    );
  try {
    message = text === null ? undefined : JSON.parse(text);
  } catch {
    message = undefined;
  }
  if (typeof message !== "object" || message === null || Array.isArray(message))
    throw bad("each message must be a JSON object: a response.create event");
  const { type, stream: _stream, ...fields } = message as Record<string, unknown>;
  if (type !== "response.create")
    throw bad(`unknown message type ${JSON.stringify(type ?? null)}: this socket takes response.create`, "type");
  if (fields.background === true)
    throw bad("WebSocket mode streams every response: background is not taken here", "background");
  const parsed = createResponseBody.safeParse(fields);
  if (!parsed.success) {
    const validation = parsed.error.issues.map(({ path, code, message, ...params }) => ({
      keyword: code,
      instancePath: `/${path.join("/")}`,
      schemaPath: "",
      message,
      params,
    }));
    const { message, details } = validationFailure(
      Object.assign(new Error("invalid"), { validation, validationContext: "body" as const }) as Parameters<
        typeof validationFailure
      >[0],
    );
    throw new AppError("invalid_request", message, details);
  }
  return parsed.data;
}

/** An error as WebSocket mode sends it: the HTTP status loopd gives it, OpenAI's type, code and param. */
export function errorEventOf(err: unknown, log: FastifyBaseLogger) {
  let code: ErrorCode = "internal";
  let message = "internal error: this is a bug in loopd, and it has been logged";
  let details: Record<string, unknown> = {};
  if (err instanceof AppError) ({ code, message, details } = err);
  else if (isDatabaseUnavailable(err)) {
    code = "unavailable";
    message = "the database is unreachable; try again shortly";
  }
  if (statusOf(code) >= 500 && code !== "unavailable") log.error({ err: describeError(err) }, "response failed");
  const { error } = openAiErrorOf(code, message, details);
  return { type: "error", status: statusOf(code), error: { ...error, code: error.code ?? code } };
}
