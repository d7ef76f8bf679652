import { AppError, statusOf, type ErrorCode } from "../errors.js";

/** An error as OpenAI's API writes it. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** The paths that answer in OpenAI's shapes: `/v1` and everything under it. */
export const isOpenAiPath = (url: string): boolean => /^\/v1(?:[/?#]|$)/.test(url);

/** OpenAI's word for who is at fault, by the HTTP status loopd's code has. */
function typeOf(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/**
 * loopd's error as OpenAI's: the same status and message; `param` is the
 * field loopd named (without its `body.` or `query.`), `code` OpenAI's own
 * when loopd gave one (`details.openai_code`: `model_not_found`,
 * `previous_response_not_found`), else loopd's.
 */
export function openAiErrorOf(code: ErrorCode, message: string, details: Record<string, unknown>): OpenAiErrorBody {
  const field = typeof details.field === "string" ? details.field : null;
  const given = typeof details.openai_code === "string" ? details.openai_code : null;
  return {
    error: {
      message,
      type: typeOf(statusOf(code)),
      param: field === null ? null : field.replace(/^(body|querystring|query|params|headers)\.?/, "") || null,
      code: given ?? (code === "invalid_request" ? null : code),
    },
  };
}

/** An error with OpenAI's code and param (`model`, `previous_response_id`), as loopd's AppError. */
export const openAiError = (
  code: ErrorCode,
  message: string,
  { param, openaiCode }: { param: string | null; openaiCode: string | null },
) =>
  new AppError(code, message, {
    ...(param !== null && { field: `body.${param}` }),
    ...(openaiCode !== null && { openai_code: openaiCode }),
  });
