import { Worker } from "node:worker_threads";

/** A matching line: its number (1-based) and its text. */
export interface LineMatch {
  line: number;
  text: string;
}

export interface LineMatcher {
  /** The lines of `text` that match, first to last, at most `limit` of them. */
  matchLines(text: string, limit: number): Promise<LineMatch[]>;
  /** Frees what the matcher holds; call it once done, whatever happened. */
  close(): Promise<void>;
}

/*
 * Plain JavaScript, started with `eval: true`: the same code runs under tsx
 * and vitest (TypeScript sources) and from dist/ (compiled JavaScript), with
 * no file of its own to find. Lines are split as search_files always did,
 * and only the first `maxLineChars` characters of a line are tested.
 */
const WORKER_CODE = `
const { parentPort, workerData } = require("node:worker_threads");
const regex = new RegExp(workerData.source, workerData.flags);
parentPort.on("message", ({ text, limit }) => {
  const found = [];
  const lines = text.split(/\\r?\\n/);
  for (let i = 0; i < lines.length && found.length < limit; i++) {
    const line = lines[i];
    const tested = line.length > workerData.maxLineChars ? line.slice(0, workerData.maxLineChars) : line;
    if (regex.test(tested)) found.push({ line: i + 1, text: line });
  }
  parentPort.postMessage(found);
});
`;

/**
 * Matches lines against a model's regular expression in a worker thread.
 * A catastrophically backtracking pattern (/^(a+)+$/ on a line of a's that
 * ends in "!") can run for hours, and on the main thread it would freeze the
 * whole service with the tool's timeout unable to fire. In a worker the event
 * loop stays free, and when `signal` aborts (timeout or cancel) the worker is
 * terminated, which stops even a running match, and the pending call rejects
 * with the signal's reason.
 *
 * `source` and `flags` must already compile (the caller reports a bad one).
 * The worker starts with the first call; one call at a time.
 */
export function createRegexLineMatcher({
  source,
  flags,
  maxLineChars,
  signal,
}: {
  source: string;
  flags: string;
  maxLineChars: number;
  signal: AbortSignal;
}): LineMatcher {
  let worker: Worker | undefined;
  let pending: { resolve: (found: LineMatch[]) => void; reject: (error: unknown) => void } | undefined;
  const settle = (outcome: { found: LineMatch[] } | { error: unknown }) => {
    const call = pending;
    pending = undefined;
    if ("found" in outcome) call?.resolve(outcome.found);
    else call?.reject(outcome.error);
  };
  const onAbort = () => {
    settle({ error: signal.reason });
    void worker?.terminate();
  };
  signal.addEventListener("abort", onAbort, { once: true });

  const start = () => {
    // execArgv: [] so the worker does not load what the process was started
    // with (tsx under tests): its code is plain JavaScript.
    const started = new Worker(WORKER_CODE, { eval: true, workerData: { source, flags, maxLineChars }, execArgv: [] });
    started.on("message", (found: LineMatch[]) => settle({ found }));
    started.on("error", (error) => settle({ error }));
    started.on("exit", (code) =>
      settle({ error: new Error(`the regular expression worker stopped (exit code ${code})`) }),
    );
    return started;
  };

  return {
    matchLines(text, limit) {
      signal.throwIfAborted();
      if (pending) throw new Error("createRegexLineMatcher: one call at a time");
      worker ??= start();
      const running = worker;
      return new Promise<LineMatch[]>((resolve, reject) => {
        pending = { resolve, reject };
        running.postMessage({ text, limit });
      });
    },
    async close() {
      signal.removeEventListener("abort", onAbort);
      await worker?.terminate();
    },
  };
}
