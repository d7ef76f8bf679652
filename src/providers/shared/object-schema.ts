import type { ToolSpec } from "../../core/model-provider.js";
import { perObject } from "../../util/per-object.js";

/**
 * A tool's input schema as the APIs take it (`type: "object"` always set),
 * made once per schema. A request body is rebuilt for each model call, but
 * its tools are not: a run hands each of its calls the same specs array, and
 * the registry hands every run the same spec per tool. The providers make
 * their tool params once per array and per spec (`perObject`) and share
 * them: a call does not copy every schema again, and the trace's hash of the
 * body (`canonicalJson` keeps each object's text) does not serialize it
 * again.
 */
export const objectSchemaOf = perObject((inputSchema: ToolSpec["inputSchema"]) => ({
  ...inputSchema,
  type: "object" as const,
}));
