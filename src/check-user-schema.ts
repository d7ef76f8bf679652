import { Worker } from "node:worker_threads";
import type { SchemaProblem } from "./json-schema.js";

/** How long one check may take before it is given up. @default */
export const SCHEMA_CHECK_TIMEOUT_MS = 5_000;

/** The heap a check may use: a schema whose errors multiply stops here, not the process. */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };

/*
 * Started with `eval: true` so that one small loader serves the compiled
 * worker (dist/, plain JavaScript) and its TypeScript source under tsx and
 * vitest (registering tsx in the worker first: a worker does not inherit the
 * loader its process was started with).
 */
const LOADER = `
const { workerData } = require("node:worker_threads");
(async () => {
  if (workerData.file.endsWith(".ts")) (await import(workerData.tsx)).register();
  await import(workerData.file);
})();
`;
const WORKER_FILE = new URL(`./user-schema-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url).href;
const TSX = typeof import.meta.resolve === "function" && WORKER_FILE.endsWith(".ts") ? import.meta.resolve("tsx/esm/api") : "tsx/esm/api";

/**
 * Checks `value` against a user's JSON Schema (compiled by
 * `compileUserSchema`) in a worker thread of its own, bounded in time and
 * memory: a small schema can take time exponential in its size to check
 * (30 levels that each refer to the next twice held the event loop for
 * 3.6 s; each level more doubles it) and, listing every error, as much
 * memory. Past `timeoutMs`, out of its heap, or when `signal` aborts, the
 * worker is terminated and the value is reported as not checked.
 */
export async function checkUserSchema(
  schema: Record<string, unknown>,
  value: unknown,
  { timeoutMs = SCHEMA_CHECK_TIMEOUT_MS, signal }: { timeoutMs?: number; signal?: AbortSignal | undefined } = {},
): Promise<SchemaProblem[]> {
  signal?.throwIfAborted();
  const worker = new Worker(LOADER, { eval: true, execArgv: [], workerData: { file: WORKER_FILE, tsx: TSX }, resourceLimits: RESOURCE_LIMITS });
  const notChecked = (why: string): SchemaProblem[] => [{ path: [], message: `could not be checked against the schema: ${why}` }];
  let onAbort = () => {};
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<SchemaProblem[]>((resolve, reject) => {
      timer = setTimeout(() => resolve(notChecked(`it took longer than ${timeoutMs / 1000} s`)), timeoutMs);
      onAbort = () => reject(signal!.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      worker.on("message", (answer: { problems: SchemaProblem[] } | { error: string }) => resolve("problems" in answer ? answer.problems : notChecked(answer.error)));
      worker.on("error", (err) => resolve(notChecked((err as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY" ? "it needed more memory than a check may use" : err.message)));
      worker.on("exit", (code) => resolve(notChecked(`the check stopped (exit code ${code})`)));
      worker.postMessage({ schema, value });
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    void worker.terminate();
  }
}
