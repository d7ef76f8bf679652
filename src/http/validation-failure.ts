import type { FastifyError, FastifySchemaValidationError } from "fastify";

interface Issue {
  field: string;
  message: string;
  [extra: string]: unknown;
}

/**
 * A failed validation as the contract reports it: the first issue's field and
 * message up front, every issue in `details.issues`. Each unknown field is an
 * issue of its own, named by its path, and listed in `details.unknown`.
 */
export function validationFailure(err: FastifyError & { validation: FastifySchemaValidationError[] }): {
  message: string;
  details: Record<string, unknown>;
} {
  const where = err.validationContext ?? "body";
  const unknown: string[] = [];
  const issues = err.validation.flatMap((v): Issue[] => {
    const path = [where, ...v.instancePath.split("/").filter(Boolean)].join(".");
    const params = v.params as { keys?: string[]; params?: Record<string, unknown> };
    if (v.keyword === "unrecognized_keys" && params.keys) {
      const fields = params.keys.map((key) => `${path}.${key}`);
      unknown.push(...fields);
      return fields.map((field) => ({ field, message: "is not a field this request takes (check its spelling)" }));
    }
    // A refinement's params (the limit it enforces) go out with its issue.
    return [{ field: path, message: v.message ?? "is invalid", ...params.params }];
  });
  const { field = where, message = "is invalid", ...extra } = issues[0] ?? {};
  return { message: `${field}: ${message}`, details: { field, ...extra, ...(unknown.length > 0 && { unknown }), issues } };
}
