import type { FastifyError, FastifySchemaValidationError } from "fastify";

interface Issue {
  field: string;
  message: string;
  [extra: string]: unknown;
}

/** A zod issue without its path. */
interface IssueFields {
  code: string;
  message: string;
  [extra: string]: unknown;
}

/** A zod issue as it comes nested in a union's (`invalid_union`) `errors`: its path is from the union's value. */
interface NestedIssue extends IssueFields {
  path: PropertyKey[];
}

/**
 * A failed validation as the contract reports it: the first issue's field and
 * message up front, every issue in `details.issues`. Each unknown field is an
 * issue of its own, named by its path, and listed in `details.unknown`.
 * Fields are written as people write them: `body.content[2].source`.
 */
export function validationFailure(err: FastifyError & { validation: FastifySchemaValidationError[] }): {
  message: string;
  details: Record<string, unknown>;
} {
  const where = err.validationContext ?? "body";
  const unknown: string[] = [];
  const issues = err.validation.flatMap((v): Issue[] => {
    const path: PropertyKey[] = v.instancePath.split("/").filter(Boolean);
    return issuesAt(path, {
      code: v.keyword,
      message: v.message ?? "is invalid",
      ...(v.params as Record<string, unknown>),
    });
  });

  function issuesAt(path: readonly PropertyKey[], issue: IssueFields): Issue[] {
    const field = fieldOf(where, path);
    const { keys, params, errors } = issue as {
      keys?: string[];
      params?: Record<string, unknown>;
      errors?: NestedIssue[][];
    };
    if (issue.code === "unrecognized_keys" && keys) {
      const fields = keys.map((key) => `${field}.${key}`);
      unknown.push(...fields);
      return fields.map((f) => ({ field: f, message: "is not a field this request takes (check its spelling)" }));
    }
    // A union none of whose options took the value: when it had the shape of
    // one of them (its issues lie inside the value: an array of blocks with
    // one bad block), that option's issues say what is wrong, and where.
    const inside =
      issue.code === "invalid_union" && errors
        ? errors.filter((option) => option.length > 0 && option.every((i) => i.path.length > 0))
        : [];
    if (inside.length === 1)
      return inside[0]!.flatMap(({ path: within, ...nested }) => issuesAt([...path, ...within], nested as IssueFields));
    // A refinement's params (the limit it enforces) go out with its issue.
    return [{ ...params, field, message: issue.message }];
  }

  const { field = where, message = "is invalid", ...extra } = issues[0] ?? {};
  return {
    message: `${field}: ${message}`,
    details: { field, ...extra, ...(unknown.length > 0 && { unknown }), issues },
  };
}

/** `body` and `["content", "2", "text"]` → `body.content[2].text`: an index in brackets. */
const fieldOf = (where: string, path: readonly PropertyKey[]) =>
  where +
  path.map((p) => (typeof p === "number" || /^\d+$/.test(String(p)) ? `[${String(p)}]` : `.${String(p)}`)).join("");
