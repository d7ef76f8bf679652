import type { Message, ToolCallBlock } from "../../core/messages.js";
import { FINISH_TOOL } from "../../core/run-settings.js";
import { callItem, finishText, outputText } from "../items/items-of-messages.js";
import { itemIds, type MessageItem, type OutputItem } from "../items/openai-items.js";
import type { ResponseResource, RunView } from "./present-response.js";

/** A run event as the SSE route presents it. */
interface RunEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

type RunShown = RunView & { completed_at: string | null };

export interface ResponseStreamOptions {
  runId: string;
  /** The seq of the last message before the response's stretch: the next answer's seq follows it. */
  lastSeq: number;
  /** The conversation's server tools (any other call is the client's) and those that wait for approval. */
  serverTools: readonly string[];
  approvalRequired: readonly string[];
  /** The response as it stands: its status and usage from `run`, `output` as streamed so far. */
  snapshot: (run: RunShown, output: OutputItem[]) => ResponseResource;
  /** Events numbered up to this one are left out (a resumed stream, `starting_after`). @default -1 */
  startingAfter?: number;
  /** The run as the stream begins (`queued` or `running`). */
  startedAs: RunShown;
}

const TERMINAL = new Set(["run.completed", "run.incomplete", "run.failed", "run.cancelled", "run.requires_action"]);

/**
 * A response's stretch of a run as the spec's streaming events, each one SSE
 * frame with its `sequence_number`: `response.created` and
 * `response.in_progress`, the answer's text as an output item with its
 * content part and `response.output_text.delta`s, each call as its item (a
 * client's `function_call` with its arguments, an `mcp_call` done when its
 * result comes, an `mcp_approval_request`), and the end as
 * `response.completed` / `response.incomplete` / `response.failed` with the
 * whole response. Numbering is worked out from the run's events alone, so a
 * resumed stream numbers them the same. Stateful: one per stream.
 */
export function createResponseStreamEncoder(options: ResponseStreamOptions) {
  const { runId, serverTools, approvalRequired, snapshot, startingAfter = -1 } = options;
  let number = -1;
  let lastSeq = options.lastSeq;
  let ended = false;
  const output: OutputItem[] = [];
  let text: { index: number; id: string; text: string } | null = null;
  /** The output index of each server call still running. */
  const running = new Map<string, number>();

  const frame = (type: string, fields: Record<string, unknown>) => {
    number += 1;
    if (number <= startingAfter) return "";
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: number, ...fields })}\n\n`;
  };
  const add = (item: OutputItem, shown: OutputItem = item) => {
    output.push(item);
    return frame("response.output_item.added", { output_index: output.length - 1, item: shown });
  };
  const done = (index: number) => frame("response.output_item.done", { output_index: index, item: output[index] });

  const openText = () => {
    const id = itemIds.answer(runId, lastSeq + 1);
    const item: MessageItem = { type: "message", id, status: "in_progress", role: "assistant", content: [] };
    let out = add(item, { ...item });
    text = { index: output.length - 1, id, text: "" };
    out += frame("response.content_part.added", {
      item_id: id,
      output_index: text.index,
      content_index: 0,
      part: outputText(""),
    });
    return out;
  };
  const delta = (piece: string) => {
    text!.text += piece;
    return frame("response.output_text.delta", {
      item_id: text!.id,
      output_index: text!.index,
      content_index: 0,
      delta: piece,
      logprobs: [],
    });
  };
  const closeText = (said: string) => {
    const { index, id } = text!;
    text = null;
    const part = outputText(said);
    output[index] = { type: "message", id, status: "completed", role: "assistant", content: [part] };
    return (
      frame("response.output_text.done", {
        item_id: id,
        output_index: index,
        content_index: 0,
        text: said,
        logprobs: [],
      }) +
      frame("response.content_part.done", { item_id: id, output_index: index, content_index: 0, part }) +
      done(index)
    );
  };

  const onAnswer = (message: Message & { role: "assistant" }) => {
    let out = "";
    const finish = message.content.find((b): b is ToolCallBlock => b.type === "tool_call" && b.name === FINISH_TOOL);
    const said = finish
      ? finishText(finish.input)
      : message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
    if (said !== "" || text) {
      if (!text) out += openText() + delta(said);
      out += closeText(said);
    }
    for (const call of message.content) {
      if (call.type !== "tool_call" || call.name === FINISH_TOOL) continue;
      const client = !serverTools.includes(call.name);
      const approval = !client && approvalRequired.includes(call.name);
      const item = callItem(call, {
        results: new Map(),
        approvals: new Set(approval ? [call.id] : []),
        clientTools: new Set(client ? [call.name] : []),
      });
      if (item.type === "function_call") {
        out += add(item, { ...item, arguments: "", status: "in_progress" });
        const index = output.length - 1;
        out +=
          frame("response.function_call_arguments.delta", {
            item_id: item.id,
            output_index: index,
            delta: item.arguments,
          }) +
          frame("response.function_call_arguments.done", {
            item_id: item.id,
            output_index: index,
            arguments: item.arguments,
          }) +
          done(index);
      } else if (item.type === "mcp_approval_request") {
        out += add(item) + done(output.length - 1);
      } else {
        out += add(item);
        running.set(call.id, output.length - 1);
      }
    }
    return out;
  };

  const onToolDone = (data: {
    tool_call_id?: unknown;
    name?: unknown;
    input?: unknown;
    is_error?: unknown;
    content?: unknown;
  }) => {
    let out = "";
    // A call the paused step made, approved and run now: its item comes with its result.
    if (!running.has(String(data.tool_call_id)) && typeof data.name === "string" && serverTools.includes(data.name)) {
      const call = {
        type: "tool_call" as const,
        id: String(data.tool_call_id),
        name: data.name,
        input: (data.input ?? {}) as Record<string, unknown>,
      };
      out += add(callItem(call, { results: new Map(), approvals: new Set(), clientTools: new Set() }));
      running.set(call.id, output.length - 1);
    }
    const index = running.get(String(data.tool_call_id));
    const item = index === undefined ? undefined : output[index];
    if (index === undefined || item?.type !== "mcp_call") return out;
    running.delete(String(data.tool_call_id));
    const content = typeof data.content === "string" ? data.content : "";
    output[index] = {
      ...item,
      output: data.is_error ? null : content,
      error: data.is_error ? content : null,
      status: "completed",
    };
    return out + done(index);
  };

  const onEnd = (run: RunShown) => {
    let out = text ? closeText(text.text) : "";
    const response = snapshot(run, output);
    const type =
      response.status === "completed"
        ? "response.completed"
        : response.status === "failed"
          ? "response.failed"
          : "response.incomplete";
    out += frame(type, { response });
    return out;
  };

  return {
    open: () =>
      frame("response.created", { response: snapshot(options.startedAs, []) }) +
      frame("response.in_progress", { response: snapshot({ ...options.startedAs, status: "running" }, []) }),

    encode(event: RunEvent): string {
      if (ended) return "";
      const data = event.data;
      switch (event.type) {
        case "text.delta":
          return (text ? "" : openText()) + delta(String((data as { delta?: unknown }).delta ?? ""));
        case "message.created": {
          const message = (data as { message?: Message }).message;
          if (!message) return "";
          lastSeq = Math.max(lastSeq, message.seq);
          return message.role === "assistant" && !message.excluded ? onAnswer(message) : "";
        }
        case "tool_call.completed":
          return onToolDone(data);
        case "conversation.deleted":
          ended = true;
          return frame("error", {
            error: {
              type: "invalid_request_error",
              code: "not_found",
              message: "the conversation was deleted",
              param: null,
            },
          });
        default:
          if (!TERMINAL.has(event.type)) return "";
          ended = true;
          return onEnd((data as { run: RunShown }).run);
      }
    },
  };
}
