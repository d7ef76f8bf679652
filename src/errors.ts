/**
 * Errors classed by who is at fault. An `AppError` carries a code from one
 * union; `statusOf` maps every code to its HTTP status in one exhaustive
 * switch, so a new code cannot be added without deciding its status.
 */

export type ErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "not_found"
  | "conversation_busy"
  | "idempotency_key_reused"
  | "payload_too_large"
  | "rate_limited"
  | "unavailable"
  | "internal";

export class AppError extends Error {
  override readonly name = "AppError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function statusOf(code: ErrorCode): number {
  switch (code) {
    case "invalid_request":
      return 400;
    case "unauthorized":
      return 401;
    case "not_found":
      return 404;
    case "conversation_busy":
    case "idempotency_key_reused":
      return 409;
    case "payload_too_large":
      return 413;
    case "rate_limited":
      return 429;
    case "unavailable":
      return 503;
    case "internal":
      return 500;
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: Record<string, unknown> };
}

export function errorBody(code: ErrorCode, message: string, details: Record<string, unknown> = {}): ErrorBody {
  return { error: { code, message, details } };
}

export const notFound = (what: string, id: string) => new AppError("not_found", `${what} ${id} does not exist`);
