import { Worker } from "node:worker_threads";
import type { SchemaProblem } from "./json-schema.js";

/** How long one check may take before it is given up, unless the caller says. */
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
const WORKER_FILE = new URL(`./user-schema-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url)
  .href;
const TSX =
  typeof import.meta.resolve === "function" && WORKER_FILE.endsWith(".ts")
    ? import.meta.resolve("tsx/esm/api")
    : "tsx/esm/api";

/** Checks at once at most (one per core here); more wait their turn. Each holds a worker of its own. */
const MAX_WORKERS = 2;

/** Workers kept between checks (a worker takes ~100 ms to start), unref'd so they never hold the process open. */
const idle: Worker[] = [];
const waiting: (() => void)[] = [];
let busy = 0;

/** Checks running and waiting, and workers kept: what the pool holds now. */
export const schemaCheckPool = () => ({ running: busy, waiting: waiting.length, idle: idle.length });

async function acquire(signal: AbortSignal | undefined): Promise<Worker> {
  if (busy >= MAX_WORKERS) {
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        signal?.removeEventListener("abort", leave);
        resolve();
      };
      const leave = () => {
        waiting.splice(waiting.indexOf(turn), 1);
        reject(signal!.reason);
      };
      waiting.push(turn);
      signal?.addEventListener("abort", leave, { once: true });
    });
  }
  busy++;
  const kept = idle.pop();
  if (kept) {
    kept.ref();
    return kept;
  }
  const worker = new Worker(LOADER, {
    eval: true,
    execArgv: [],
    workerData: { file: WORKER_FILE, tsx: TSX },
    resourceLimits: RESOURCE_LIMITS,
  });
  // While idle nobody listens: an error then must not be an uncaught one, and a worker gone is not kept.
  worker.on("error", () => {});
  worker.on("exit", () => idle.includes(worker) && idle.splice(idle.indexOf(worker), 1));
  return worker;
}

/** A worker that answered is kept for the next check; one stopped mid-check (timeout, heap, abort) is terminated. */
function release(worker: Worker, { reusable }: { reusable: boolean }): void {
  busy--;
  if (reusable && idle.length < MAX_WORKERS) {
    worker.unref();
    idle.push(worker);
  } else {
    void worker.terminate();
  }
  waiting.shift()?.();
}

/**
 * Checks `value` against a user's JSON Schema (compiled by
 * `compileUserSchema`) in a worker thread, bounded in time and memory: a
 * small schema can take time exponential in its size to check (30 levels
 * that each refer to the next twice held the event loop for 3.6 s; each
 * level more doubles it) and, listing every error, as much memory. Past
 * `timeoutMs`, out of its heap, or when `signal` aborts, the worker is
 * terminated and the value is reported as not checked (or, aborted, the
 * check rejects with the signal's reason). A schema `compileUserSchema`
 * refuses (a pattern RE2 cannot run) is reported the same way, unless
 * `uncompilable: "skip"`: then the value passes (someone else checks it, as
 * an MCP server does its own tools' input).
 */
export async function checkUserSchema(
  schema: Record<string, unknown>,
  value: unknown,
  {
    timeoutMs = SCHEMA_CHECK_TIMEOUT_MS,
    signal,
    uncompilable = "refuse",
  }: { timeoutMs?: number; signal?: AbortSignal | undefined; uncompilable?: "refuse" | "skip" } = {},
): Promise<SchemaProblem[]> {
  signal?.throwIfAborted();
  const worker = await acquire(signal);
  const notChecked = (why: string): SchemaProblem[] => [
    { path: [], message: `could not be checked against the schema: ${why}` },
  ];
  let answered = false;
  let settle: (problems: SchemaProblem[]) => void = () => {};
  const onMessage = (answer: { problems: SchemaProblem[] } | { error: string; compiling: boolean }) => {
    answered = true;
    settle(
      "problems" in answer
        ? answer.problems
        : answer.compiling && uncompilable === "skip"
          ? []
          : notChecked(answer.error),
    );
  };
  const onError = (err: Error) =>
    settle(
      notChecked(
        (err as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY"
          ? "it needed more memory than a check may use"
          : err.message,
      ),
    );
  const onExit = (code: number) => settle(notChecked(`the check stopped (exit code ${code})`));
  let onAbort = () => {};
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<SchemaProblem[]>((resolve, reject) => {
      settle = resolve;
      timer = setTimeout(() => resolve(notChecked(`it took longer than ${timeoutMs / 1000} s`)), timeoutMs);
      onAbort = () => reject(signal!.reason);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      worker.on("message", onMessage).on("error", onError).on("exit", onExit);
      worker.postMessage({ schema, value });
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    worker.off("message", onMessage).off("error", onError).off("exit", onExit);
    release(worker, { reusable: answered });
  }
}
