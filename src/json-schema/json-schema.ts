import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { RE2JS } from "re2js";

/**
 * JSON Schemas a client (or a tool server) wrote, checked against values a
 * model sent. A `pattern` in such a schema is matched by RE2's linear-time
 * engine (re2js, pure JavaScript): with the backtracking RegExp, `^(a+)+$` on
 * 29 characters held the process for 38 s. A pattern RE2 cannot run
 * (lookarounds, backreferences) makes the schema one loopd cannot check.
 */
const linearTime = Object.assign(
  (pattern: string) => {
    const re = RE2JS.compile(pattern);
    // Ajv keeps one compiled pattern per distinct `toString()`: it must tell patterns apart, as a RegExp's does.
    return { test: (s: string) => re.matcher(s).find(), toString: () => `re2js:${pattern}` };
  },
  { code: "re2js" },
);

/**
 * An Ajv of its own for each schema: one shared instance would register every
 * schema's `$id` (a second compile of it fails; another client's `$ref` could
 * reach it) and keep every compiled schema for good.
 */
function createAjv({ validateSchema = false }: { validateSchema?: boolean } = {}): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateSchema, code: { regExp: linearTime } });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  return ajv;
}

/**
 * Checks schemas against the JSON Schema meta-schema, compiled once (~40 ms):
 * it only reads them, so it registers and keeps nothing of them.
 */
let metaSchema: Ajv2020 | undefined;

/** A problem of a value against a schema: where (`a.b[2]`, empty at the top) and what. */
export interface SchemaProblem {
  path: (string | number)[];
  message: string;
}

/** A user's schema, compiled once: `check` lists what is wrong with a value (nothing when it matches). */
export interface UserSchema {
  check(value: unknown): SchemaProblem[];
}

/**
 * Compiles a user's JSON Schema, or throws an Error saying why it cannot be
 * checked (an unresolved `$ref`, a pattern RE2 cannot run). Compiling takes
 * time linear in the schema; checking a value may not (`$ref`s that fan out,
 * `uniqueItems` over a long array): run `check` in `checkUserSchema`'s worker.
 */
export function compileUserSchema(schema: Record<string, unknown>): UserSchema {
  metaSchema ??= createAjv({ validateSchema: true });
  if (!metaSchema.validateSchema(schema))
    throw new Error(`not a valid JSON Schema: ${metaSchema.errorsText(metaSchema.errors)}`);
  const validate: ValidateFunction = createAjv().compile(schema);
  return {
    check(value) {
      if (validate(value)) return [];
      return (validate.errors ?? []).map(problemOf);
    },
  };
}

/** Whether loopd can check values against `schema` (see `compileUserSchema`). */
export function isCheckableSchema(schema: Record<string, unknown>): boolean {
  try {
    compileUserSchema(schema);
    return true;
  } catch {
    return false;
  }
}

function problemOf(error: ErrorObject): SchemaProblem {
  const path: (string | number)[] = error.instancePath
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  if (error.keyword === "required") path.push((error.params as { missingProperty: string }).missingProperty);
  if (error.keyword === "additionalProperties")
    path.push((error.params as { additionalProperty: string }).additionalProperty);
  const message =
    error.keyword === "required"
      ? "is required"
      : error.keyword === "additionalProperties"
        ? "is not allowed"
        : (error.message ?? "is not valid");
  return { path, message };
}

/** The top of a tool's input schema, as both providers require it: an object, its properties (if any) an object. */
export function isObjectSchema(schema: Record<string, unknown>): boolean {
  const { type, properties, required } = schema;
  return (
    type === "object" &&
    (properties === undefined ||
      (typeof properties === "object" && properties !== null && !Array.isArray(properties))) &&
    (required === undefined || (Array.isArray(required) && required.every((r) => typeof r === "string")))
  );
}
