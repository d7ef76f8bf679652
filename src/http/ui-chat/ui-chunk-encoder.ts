import type { UIMessageChunk } from "ai";
import { isLoopdMessage, noteOf, type Message } from "../../core/messages.js";
import type { presentRun } from "../../conversations/present.js";
import type { ActionAnswered } from "../../runs/run-events.js";
import { TERMINAL_EVENT_TYPES } from "../../runs/run-events.js";
import type { PresentedEvent } from "../present-run-events.js";

type Run = ReturnType<typeof presentRun>;

/** What a UI message's metadata says of its run (`finish`; `start` has the id only). */
export interface RunMetadata {
  run_id: string;
  status?: Run["status"];
  stop_reason?: Run["stop_reason"];
  usage?: Run["usage"];
}

/** How the stream's chunks are framed: one SSE `data:` line each, `[DONE]` after the last. */
export const uiFrame = (chunk: UIMessageChunk<RunMetadata>) => `data: ${JSON.stringify(chunk)}\n\n`;
export const UI_DONE = "data: [DONE]\n\n";

/** The AI SDK's finish reason for a run's end. */
export function finishReasonOf(run: Pick<Run, "status" | "stop_reason">) {
  if (run.status === "requires_action") return "tool-calls" as const;
  switch (run.stop_reason) {
    case "end_turn":
    case "finish":
      return "stop" as const;
    case "max_tokens":
      return "length" as const;
    case "refusal":
    case "content_filter":
      return "content-filter" as const;
    case "error":
      return "error" as const;
    default:
      return run.status === "failed" ? ("error" as const) : ("other" as const);
  }
}

/**
 * A run's events (as the SSE route presents them) as the AI SDK's UI message
 * chunks: one assistant UI message per run (its id is the run's id), a step
 * per model call, the model's text as it streams (one `text-delta` per
 * `text.delta`, so the batching stays), each proposed call's input and its
 * result, the approvals a pause waits on, and the run's end as `finish` with
 * the run's id, status, stop reason and usage. Stateful: one per stream.
 */
export function createUiChunkEncoder(runId: string) {
  let step = 0;
  let inStep = false;
  let openText: string | null = null;
  /** Calls the user denied: their results are the denial, already told by `tool-output-denied`. */
  const denied = new Set<string>();

  const startStep = (out: UIMessageChunk<RunMetadata>[]) => {
    if (inStep) return;
    inStep = true;
    step += 1;
    out.push({ type: "start-step" });
  };
  const endText = (out: UIMessageChunk<RunMetadata>[]) => {
    if (openText !== null) out.push({ type: "text-end", id: openText });
    openText = null;
  };
  const endStep = (out: UIMessageChunk<RunMetadata>[]) => {
    endText(out);
    if (inStep) out.push({ type: "finish-step" });
    inStep = false;
  };

  const onMessage = (message: Message, out: UIMessageChunk<RunMetadata>[]) => {
    if (message.role === "user") {
      // The user's own message is already in the client; a notice or a summary loopd wrote is shown as a notice.
      if (isLoopdMessage(message)) out.push({ type: "data-notice", id: message.id, data: { text: noteOf(message) } });
      return;
    }
    if (message.role === "tool") {
      const [result] = message.content;
      if (denied.has(result.tool_call_id)) return;
      out.push(
        result.is_error
          ? { type: "tool-output-error", toolCallId: result.tool_call_id, errorText: result.content }
          : { type: "tool-output-available", toolCallId: result.tool_call_id, output: result.content },
      );
      return;
    }
    // A new model call after the results of the last one: a new step.
    if (inStep && openText === null) endStep(out);
    startStep(out);
    const streamed = openText !== null;
    endText(out);
    message.content.forEach((block, i) => {
      if (block.type === "text") {
        if (streamed || block.text === "") return;
        const id = `${message.id}:${i}`;
        out.push({ type: "text-start", id }, { type: "text-delta", id, delta: block.text }, { type: "text-end", id });
        return;
      }
      out.push(
        { type: "tool-input-start", toolCallId: block.id, toolName: block.name },
        { type: "tool-input-available", toolCallId: block.id, toolName: block.name, input: block.input },
      );
    });
  };

  const onEnd = (run: Run, out: UIMessageChunk<RunMetadata>[]) => {
    if (run.status === "requires_action") {
      for (const call of run.required_action?.tool_calls ?? []) {
        if (call.action === "approve")
          out.push({ type: "tool-approval-request", approvalId: call.tool_call_id, toolCallId: call.tool_call_id });
      }
    }
    if (run.status === "failed") out.push({ type: "error", errorText: run.error?.message ?? "the run failed" });
    endStep(out);
    out.push({
      type: "finish",
      finishReason: finishReasonOf(run),
      messageMetadata: { run_id: run.id, status: run.status, stop_reason: run.stop_reason, usage: run.usage },
    });
  };

  return {
    /** What the stream begins with, before any event: the run's UI message. */
    open: () => uiFrame({ type: "start", messageId: runId, messageMetadata: { run_id: runId } }),

    /** The frames of one event ("" for an event the UI has no part for); the run's end closes the stream with `[DONE]`. */
    encode(event: PresentedEvent): string {
      const out: UIMessageChunk<RunMetadata>[] = [];
      const data = event.data;
      switch (event.type) {
        case "text.delta":
          if (openText === null) {
            // Text after a step's tool results belongs to the next model call.
            if (inStep) endStep(out);
            startStep(out);
            openText = `${runId}:${step}:${event.seq}`;
            out.push({ type: "text-start", id: openText });
          }
          out.push({ type: "text-delta", id: openText, delta: (data as { delta: string }).delta });
          break;
        case "message.created":
          onMessage((data as { message: Message }).message, out);
          break;
        case "step.restarted":
          // The model's call is made again: what it streamed before is not its answer.
          endStep(out);
          break;
        case "run.action_answered":
          for (const answer of (data as ActionAnswered).approvals) {
            if (answer.approve) continue;
            denied.add(answer.tool_call_id);
            out.push({ type: "tool-output-denied", toolCallId: answer.tool_call_id });
          }
          break;
        case "conversation.deleted":
          endStep(out);
          out.push(
            { type: "error", errorText: "the conversation was deleted" },
            { type: "finish", finishReason: "error", messageMetadata: { run_id: runId } },
          );
          return out.map(uiFrame).join("") + UI_DONE;
        default:
          if (!TERMINAL_EVENT_TYPES.has(event.type)) break;
          onEnd((data as { run: Run }).run, out);
          return out.map(uiFrame).join("") + UI_DONE;
      }
      return out.map(uiFrame).join("");
    },
  };
}
