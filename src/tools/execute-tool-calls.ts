import { setMaxListeners } from "node:events";
import pLimit from "p-limit";
import type { ToolCallBlock } from "../core/messages.js";
import type { CallPlace, Tool } from "./define-tool.js";
import { executeToolCall, type ToolCallOutcome } from "./execute-tool-call.js";
import type { ToolRegistry } from "./tool-registry.js";

export type { ToolCallOutcome } from "./execute-tool-call.js";

export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
export const DEFAULT_TOOL_CONCURRENCY = 8;

/**
 * Runs one assistant message's tool calls and yields one outcome per call, in
 * the model's order, each as soon as it and every earlier one are done, so
 * the caller can save each result before the next arrives.
 *
 * Consecutive read-only calls run in parallel, at most `concurrency` at once
 * (a model may send a hundred, and each may hold a file in memory); any other
 * call runs alone, after everything before it and before anything after it.
 * Calls to unknown tools do nothing, so they count as read-only.
 *
 * Never throws for anything a call does: every failure is a result with
 * `is_error: true` that tells the model what to do. When `signal` aborts,
 * running calls are answered as cancelled at once and later ones are not
 * started, but still each get a cancelled result.
 */
export async function* executeToolCalls({
  calls,
  registry,
  allowed,
  decided,
  workspaceDir,
  place,
  defaultTimeoutMs = DEFAULT_TOOL_TIMEOUT_MS,
  concurrency = DEFAULT_TOOL_CONCURRENCY,
  maxResultChars,
  signal,
  onStart,
  now = Date.now,
}: {
  calls: ToolCallBlock[];
  registry: ToolRegistry;
  /** Names the conversation may use; a call to any other is answered as an unknown tool. @default every registered tool */
  allowed?: string[];
  /** The tool a call was decided for (by its id; null: none was found): it runs that one, whatever its name means now. @default by name */
  decided?: ReadonlyMap<string, Tool | null>;
  workspaceDir: string;
  /** Where the calls are made. @default nowhere */
  place?: CallPlace | undefined;
  /** For tools without a `timeoutMs` of their own. @default 30000 */
  defaultTimeoutMs?: number;
  /** How many calls may run at once (a positive integer). @default 8 */
  concurrency?: number;
  /** For tools without a `maxResultChars` of their own. @default 16384 */
  maxResultChars?: number;
  /** The run's cancellation. */
  signal?: AbortSignal;
  /** Called when a call begins; not called for calls cancelled before they began. */
  onStart?: (call: ToolCallBlock) => void;
  /** @default Date.now */
  now?: () => number;
}): AsyncGenerator<ToolCallOutcome> {
  const available =
    allowed === undefined ? registry.names() : registry.names().filter((name) => allowed.includes(name));
  const toolFor = (call: ToolCallBlock): Tool | undefined =>
    decided?.has(call.id)
      ? (decided.get(call.id) ?? undefined)
      : available.includes(call.name)
        ? registry.get(call.name)
        : undefined;

  // Every running call listens for cancellation, and a batch may hold more
  // than the 10 listeners Node allows a signal before warning of a leak. Give
  // them our own signal, linked to the caller's by a single listener.
  const cancel = new AbortController();
  setMaxListeners(0, cancel.signal);
  const onCancel = () => cancel.abort(signal?.reason);
  if (signal?.aborted) onCancel();
  else signal?.addEventListener("abort", onCancel, { once: true });

  // A call waiting for a slot has not begun: it gets onStart when it does,
  // and a cancelled result without running if the run is cancelled first.
  const limit = pLimit(concurrency);
  try {
    for (const batch of batchesOf(calls, (call) => toolFor(call)?.readOnly ?? true)) {
      const pending = batch.map((call) =>
        limit(() =>
          executeToolCall({
            call,
            tool: toolFor(call),
            available,
            workspaceDir,
            ...(place && { place }),
            timeoutMs: defaultTimeoutMs,
            ...(maxResultChars !== undefined && { maxResultChars }),
            signal: cancel.signal,
            onStart,
            now,
          }),
        ),
      );
      // Only a throwing onStart rejects; mark the later ones handled so the
      // first failure surfaces from the loop instead of as an unhandled rejection.
      for (const outcome of pending) outcome.catch(() => {});
      for (const outcome of pending) yield await outcome;
    }
  } finally {
    signal?.removeEventListener("abort", onCancel);
  }
}

/** Splits calls into runs of consecutive read-only calls and single other calls. */
function batchesOf(calls: ToolCallBlock[], isReadOnly: (call: ToolCallBlock) => boolean): ToolCallBlock[][] {
  const batches: ToolCallBlock[][] = [];
  let readOnlyRun: ToolCallBlock[] = [];
  for (const call of calls) {
    if (isReadOnly(call)) {
      readOnlyRun.push(call);
      continue;
    }
    if (readOnlyRun.length > 0) batches.push(readOnlyRun);
    readOnlyRun = [];
    batches.push([call]);
  }
  if (readOnlyRun.length > 0) batches.push(readOnlyRun);
  return batches;
}
