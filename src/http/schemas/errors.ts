import { z } from "zod";
import { ERROR_CODES, errorBody, type ErrorCode } from "../../errors.js";
import { documented } from "../openapi.js";

/** The contract's error answers, as zod and as /openapi.json describes them. */

export const errorSchema = z.object({
  error: z.object({ code: z.enum(ERROR_CODES), message: z.string(), details: z.record(z.string(), z.unknown()) }),
});

/** An error answer as /openapi.json describes it: when it comes, and an example. */
export const errorAnswer = (
  description: string,
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> = {},
) => documented(errorSchema, description, errorBody(code, message, details));

/** Error answers, for /openapi.json: any route may refuse its input, be overloaded or away, or fail. */
export const requestErrorResponses = {
  401: errorAnswer(
    "`unauthorized`: API keys are on and the request has no key, or one that is unknown or revoked",
    "unauthorized",
    "an API key is required: send Authorization: Bearer <key> or x-api-key: <key>",
  ),
  429: errorAnswer(
    "`rate_limited`: more requests a minute with this key than `RATE_LIMIT_PER_MIN` (see `Retry-After`); or, starting a run, `too_many_runs`: the tenant has `MAX_ACTIVE_RUNS_PER_TENANT` open runs (`details.active_runs`), or `tenant_budget_exhausted`: the tenant's runs cost more than `TENANT_DAILY_COST_USD` today (UTC; `details.limit_usd`, `details.spent_usd`, `Retry-After` until 00:00 UTC); or, opening a stream, `too_many_streams`: the tenant holds `MAX_STREAMS_PER_TENANT` open streams (on every instance together); or, opening an MCP session, `too_many_sessions`: the tenant holds `MCP_MAX_SESSIONS_PER_TENANT` sessions on this server, each in use",
    "rate_limited",
    "more than 600 requests a minute with this API key; try again in 12 s",
    { limit: 600, retry_after_s: 12 },
  ),
  400: errorAnswer(
    "`invalid_request`: the body, query, params or headers failed validation; `details.field` names the field",
    "invalid_request",
    "limit: must be at most 100",
    { field: "querystring.limit" },
  ),
  500: errorAnswer(
    "`internal`: a bug in loopd; the message says so without internals",
    "internal",
    "internal error: this is a bug in loopd, and it has been logged",
  ),
  421: errorAnswer(
    "`misdirected_request`: the `Host` is not a name of this server (with API keys off: not `localhost`, `127.0.0.1`, `[::1]` nor in `ALLOWED_HOSTS`; with keys on, when `ALLOWED_HOSTS` is set: none of those); `/healthz` and `/readyz` answer any `Host`",
    "misdirected_request",
    'this server does not answer to the name "attacker.example:3000": it answers to localhost, 127.0.0.1, [::1] and the names in ALLOWED_HOSTS',
    { host: "attacker.example:3000" },
  ),
  403: errorAnswer(
    "`forbidden_origin`: with API keys off, a browser request whose `Origin` is neither loopd's own nor in `CORS_ORIGINS` (CORS preflights too)",
    "forbidden_origin",
    'browser requests from "https://attacker.example" are refused: a page may call loopd only from loopd\'s own origin or one in CORS_ORIGINS',
    { origin: "https://attacker.example" },
  ),
  503: errorAnswer(
    "`unavailable`: the database is unreachable, or the process is overloaded or shutting down; retry after `Retry-After` seconds",
    "unavailable",
    "the database is unreachable; try again shortly",
  ),
};
/** A route with ids in its path may not find what they name. */
export const errorResponses = {
  ...requestErrorResponses,
  404: errorAnswer("`not_found`: no such conversation or run", "not_found", "conversation conv_123 does not exist"),
};
/** A route that takes a body may also refuse its size or its type. */
export const bodyLimitResponses = {
  413: errorAnswer(
    "`payload_too_large`: the body is over `BODY_LIMIT_BYTES`; `details.limit` gives the limit",
    "payload_too_large",
    "the request body is larger than the 1048576 bytes the server accepts",
    { limit: 1_048_576 },
  ),
  415: errorAnswer(
    "`unsupported_media_type`: a body not sent as `application/json`",
    "unsupported_media_type",
    "request bodies must be JSON, sent with Content-Type: application/json",
    { content_type: "text/plain" },
  ),
};
export const bodyErrorResponses = { ...errorResponses, ...bodyLimitResponses };

/** A 409 of a request that starts a run: the conversation is busy (and what else the route says). */
export const runConflict = (description: string) =>
  errorAnswer(description, "conversation_busy", "conversation conv_123 already has an active run", {
    active_run_id: "run_123",
  });
