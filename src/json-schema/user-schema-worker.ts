import { parentPort } from "node:worker_threads";
import { compileUserSchema } from "./json-schema.js";

/** What `checkUserSchema` reports at most: a value wrong everywhere is told about its first problems. */
const MAX_PROBLEMS = 20;

/** The worker of `checkUserSchema`: one schema and one value per message, its problems back. */
parentPort!.on("message", ({ schema, value }: { schema: Record<string, unknown>; value: unknown }) => {
  let compiling = true;
  try {
    const compiled = compileUserSchema(schema);
    compiling = false;
    parentPort!.postMessage({ problems: compiled.check(value).slice(0, MAX_PROBLEMS) });
  } catch (err) {
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err), compiling });
  }
});
