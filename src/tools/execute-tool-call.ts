import type { ImageBlock, ToolCallBlock, ToolResultBlock } from "../core/messages.js";
import { clipToolResult, MAX_TOOL_RESULT_CHARS } from "./clip-tool-result.js";
import { ToolErrorResult, ToolResultWithImages, type CallPlace, type Tool, type ToolContext } from "./define-tool.js";
import {
  cancelledMessage,
  invalidArgumentsMessage,
  invalidJsonMessage,
  thrownMessage,
  timeoutMessage,
  unknownToolMessage,
} from "./tool-failure-messages.js";
import { toolResultToText } from "./tool-result-to-text.js";
import { ToolCallWaits, ToolResultWithUsage } from "./agent-tools.js";
import type { PendingToolCall } from "../core/run-outcome.js";
import type { RunUsage } from "../core/usage.js";

export interface ToolCallOutcome {
  call: ToolCallBlock;
  result: ToolResultBlock;
  /** From the moment the call began (after `onStart`) until its result was ready; 0 if it never began. */
  durationMs: number;
  status: "ok" | "error" | "timeout" | "cancelled";
  /** The call has no result yet: the run waits on these calls (a child run's), then runs it again. */
  waiting?: PendingToolCall[];
  /** What the call spent of its own (a child run's tokens): the run counts it as its own. */
  spent?: RunUsage;
}

/**
 * Runs one call to its outcome. Never rejects for anything the call does (an
 * exception in `onStart` is the caller's and does propagate).
 */
export async function executeToolCall({
  call,
  tool,
  available,
  workspaceDir,
  place = { conversationId: null, runId: null },
  timeoutMs,
  maxResultChars = MAX_TOOL_RESULT_CHARS,
  signal,
  onStart,
  now,
}: {
  call: ToolCallBlock;
  /** The tool the call names, or undefined when it is not registered or not allowed. */
  tool: Tool | undefined;
  /** The tool names the model may use, for the unknown-tool message. */
  available: string[];
  workspaceDir: string;
  /** Where the call is made. @default nowhere (null, null) */
  place?: CallPlace;
  /** Used when the tool has no `timeoutMs` of its own. */
  timeoutMs: number;
  /** Used when the tool has no `maxResultChars` of its own. @default 16384 */
  maxResultChars?: number;
  signal: AbortSignal;
  onStart: ((call: ToolCallBlock) => void) | undefined;
  now: () => number;
}): Promise<ToolCallOutcome> {
  const cap = tool?.maxResultChars ?? maxResultChars;
  if (signal.aborted) return outcomeOf(call, "cancelled", cancelledMessage(false), 0, cap);

  onStart?.(call);
  const startedAt = now();
  const done = (status: ToolCallOutcome["status"], content: string, images?: readonly ImageBlock[]) =>
    outcomeOf(call, status, content, Math.max(0, now() - startedAt), cap, images);

  // Arguments that are not JSON first: a client tool's call (not registered here) lands here too, and its fault is its JSON.
  if (call.raw_arguments !== undefined) return done("error", invalidJsonMessage(call.name, call.raw_arguments));
  if (tool === undefined) return done("error", unknownToolMessage(call.name, available));

  let input: unknown;
  try {
    const parsed = await tool.input.safeParseAsync(call.input);
    if (!parsed.success) return done("error", invalidArgumentsMessage(call.name, parsed.error.issues, call.input));
    input = parsed.data;
  } catch (error) {
    // A refinement or transform in the schema threw: the tool's fault, reported like one.
    return done("error", thrownMessage(error));
  }
  if (signal.aborted) return done("cancelled", cancelledMessage(true));

  const effectiveTimeoutMs = tool.timeoutMs ?? timeoutMs;
  const settled = await runWithDeadline({
    tool,
    input,
    context: { workspaceDir, maxResultChars: cap, toolCallId: call.id, ...place },
    timeoutMs: effectiveTimeoutMs,
    signal,
  });
  switch (settled.kind) {
    case "ok": {
      if (settled.value instanceof ToolResultWithImages) return done("ok", settled.value.text, settled.value.images);
      if (settled.value instanceof ToolCallWaits) return { ...done("ok", ""), waiting: settled.value.pending };
      if (settled.value instanceof ToolResultWithUsage) {
        const { text, isError, usage } = settled.value;
        return { ...done(isError ? "error" : "ok", text), ...(usage && { spent: usage }) };
      }
      let text: string;
      try {
        text = toolResultToText(settled.value);
      } catch (error) {
        return done("error", `The tool's result could not be serialized: ${thrownMessage(error)}`);
      }
      return done("ok", text);
    }
    case "error":
      return done(
        "error",
        settled.error instanceof ToolErrorResult ? settled.error.message : thrownMessage(settled.error),
      );
    case "timeout":
      return done("timeout", timeoutMessage(call.name, effectiveTimeoutMs));
    case "cancelled":
      return done("cancelled", cancelledMessage(true));
  }
}

type Settled =
  { kind: "ok"; value: unknown } | { kind: "error"; error: unknown } | { kind: "timeout" } | { kind: "cancelled" };

/** setTimeout fires at once for delays past 2^31 - 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Settles with whichever comes first: the tool's own result, the deadline or
 * the run's cancellation. On the last two the tool's signal is aborted, and we
 * stop waiting even if the tool ignores it: a stuck tool must not hold the run.
 */
function runWithDeadline({
  tool,
  input,
  context,
  timeoutMs,
  signal,
}: {
  tool: Tool;
  input: unknown;
  context: Omit<ToolContext, "signal">;
  timeoutMs: number;
  signal: AbortSignal;
}): Promise<Settled> {
  const controller = new AbortController();
  return new Promise<Settled>((resolve) => {
    let finished = false;
    const finish = (settled: Settled) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onCancel);
      resolve(settled);
    };
    const onCancel = () => {
      finish({ kind: "cancelled" });
      controller.abort(signal.reason);
    };
    const timer = setTimeout(
      () => {
        finish({ kind: "timeout" });
        controller.abort(new DOMException(`${tool.name} timed out after ${timeoutMs} ms`, "TimeoutError"));
      },
      Math.min(timeoutMs, MAX_TIMER_MS),
    );
    signal.addEventListener("abort", onCancel, { once: true });

    // Through a promise so a synchronous throw is caught like a rejection.
    Promise.resolve()
      .then(() => tool.execute(input, { ...context, signal: controller.signal }))
      .then(
        (value) => finish({ kind: "ok", value }),
        (error: unknown) => finish({ kind: "error", error }),
      );
  });
}

function outcomeOf(
  call: ToolCallBlock,
  status: ToolCallOutcome["status"],
  content: string,
  durationMs: number,
  maxChars: number,
  images: readonly ImageBlock[] = [],
): ToolCallOutcome {
  return {
    call,
    status,
    durationMs,
    result: {
      type: "tool_result",
      tool_call_id: call.id,
      name: call.name,
      content: clipToolResult(content, { maxChars }),
      is_error: status !== "ok",
      ...(images.length > 0 && { images: [...images] }),
    },
  };
}
