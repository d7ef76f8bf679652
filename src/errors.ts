/**
 * Errors classed by who is at fault. An `AppError` carries a code from one
 * union; `statusOf` maps every code to its HTTP status in one exhaustive
 * switch, so a new code cannot be added without deciding its status.
 */

export const ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "request_timeout",
  "conversation_busy",
  "idempotency_key_reused",
  "run_not_waiting",
  "agent_exists",
  "agent_archived",
  "agent_from_file",
  "version_conflict",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "too_many_runs",
  "too_many_streams",
  "too_many_sessions",
  "queue_full",
  "tenant_budget_exhausted",
  "headers_too_large",
  "misdirected_request",
  "forbidden_origin",
  "unavailable",
  "internal",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

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

/**
 * A failure of the operator's setup (configuration, a folder, a port, the
 * database) whose message says what to fix: programs print it after one
 * prefix, without a stack trace.
 */
export class OperatorError extends Error {
  override readonly name: string = "OperatorError";
}

export function statusOf(code: ErrorCode): number {
  switch (code) {
    case "invalid_request":
      return 400;
    case "unauthorized":
      return 401;
    case "forbidden_origin":
      return 403;
    case "not_found":
      return 404;
    case "method_not_allowed":
      return 405;
    case "request_timeout":
      return 408;
    case "conversation_busy":
    case "idempotency_key_reused":
    case "run_not_waiting":
    case "agent_exists":
    case "agent_archived":
    case "agent_from_file":
    case "version_conflict":
      return 409;
    case "payload_too_large":
      return 413;
    case "unsupported_media_type":
      return 415;
    case "rate_limited":
    case "too_many_runs":
    case "too_many_streams":
    case "too_many_sessions":
    case "queue_full":
    case "tenant_budget_exhausted":
      return 429;
    case "misdirected_request":
      return 421;
    case "headers_too_large":
      return 431;
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

/** The first error along `err`'s cause chain that `match` accepts. */
export function findInCauseChain<T>(err: unknown, match: (e: unknown) => T | undefined): T | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const found = match(e);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * An error as the logs may show it: its type, code and the driver's own
 * message, never the failed query's parameters (which hold users' messages).
 */
export function describeError(err: unknown): { type: string; code?: string; message: string } {
  const root = findInCauseChain(err, (e) => ((e as { cause?: unknown }).cause ? undefined : e)) ?? err;
  const code = findInCauseChain(err, (e) => {
    const c = (e as { code?: unknown }).code;
    return typeof c === "string" ? c : undefined;
  });
  const message = root instanceof Error ? root.message : String(root);
  return {
    type: root instanceof Error ? root.name : typeof root,
    ...(code !== undefined && { code }),
    message: message.split("\n")[0]!.slice(0, 300),
  };
}
