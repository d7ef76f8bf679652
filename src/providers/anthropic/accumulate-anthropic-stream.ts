import type Anthropic from "@anthropic-ai/sdk";
import type { AssistantBlock } from "../../core/messages.js";
import type { Usage } from "../../core/usage.js";
import { isPlainObject, parseToolArguments } from "../shared/parse-tool-arguments.js";
import { streamCutShort } from "../shared/stream-cut-short.js";
import { uniqueToolCalls } from "../shared/unique-tool-calls.js";

export interface AccumulatedAnthropicMessage {
  content: AssistantBlock[];
  rawStopReason: string | null;
  usage: Usage;
  model: string | null;
}

type Pending =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; json: string; startInput: unknown }
  | { type: "other" };

/**
 * Folds Anthropic's raw stream events into one assistant message, calling
 * `onTextDelta` for each text delta as it arrives and `onProgress` for every
 * event (the SDK drops the `ping` keep-alives before they get here, so each
 * one carries part of the answer, thinking included). Blocks loopd does not keep
 * (thinking, server tools) are skipped; tool input JSON is parsed once the
 * stream ends, and input that is not a JSON object is kept as
 * `raw_arguments`.
 */
export async function accumulateAnthropicStream(
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>,
  {
    onTextDelta,
    onProgress,
    onUsage,
  }: {
    onTextDelta?: ((delta: string) => void) | undefined;
    onProgress?: (() => void) | undefined;
    onUsage?: ((usage: Usage) => void) | undefined;
  } = {},
): Promise<AccumulatedAnthropicMessage> {
  const blocks = new Map<number, Pending>();
  const usage: Usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
  let model: string | null = null;
  let rawStopReason: string | null = null;
  let stopped = false;

  for await (const event of events) {
    onProgress?.();
    switch (event.type) {
      case "message_start":
        model = event.message.model;
        applyUsage(usage, event.message.usage);
        onUsage?.({ ...usage });
        break;
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "text") {
          blocks.set(event.index, { type: "text", text: block.text });
          if (block.text !== "") onTextDelta?.(block.text);
        } else if (block.type === "tool_use") {
          blocks.set(event.index, {
            type: "tool_use",
            id: block.id,
            name: block.name,
            json: "",
            startInput: block.input,
          });
        } else {
          blocks.set(event.index, { type: "other" });
        }
        break;
      }
      case "content_block_delta": {
        const pending = blocks.get(event.index);
        if (event.delta.type === "text_delta" && pending?.type === "text") {
          pending.text += event.delta.text;
          onTextDelta?.(event.delta.text);
        } else if (event.delta.type === "input_json_delta" && pending?.type === "tool_use") {
          pending.json += event.delta.partial_json;
        }
        break;
      }
      case "message_delta":
        rawStopReason = event.delta.stop_reason ?? rawStopReason;
        applyUsage(usage, event.usage);
        onUsage?.({ ...usage });
        break;
      case "message_stop":
        stopped = true;
        break;
      case "content_block_stop":
        break;
    }
  }

  if (!stopped && rawStopReason === null) throw streamCutShort("Anthropic");

  const content = [...blocks.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([, block]): AssistantBlock[] => {
      switch (block.type) {
        case "text":
          return block.text === "" ? [] : [{ type: "text", text: block.text }];
        case "tool_use":
          return [{ type: "tool_call", id: block.id, name: block.name, ...toolInput(block) }];
        case "other":
          return [];
      }
    });
  return { content: uniqueToolCalls(content), rawStopReason, usage, model };
}

function toolInput(block: { json: string; startInput: unknown }) {
  // Input normally streams as JSON deltas; a block that carried its whole
  // input in `content_block_start` has none.
  if (block.json === "" && isPlainObject(block.startInput)) return { input: block.startInput };
  return parseToolArguments(block.json);
}

/**
 * Anthropic reports usage in `message_start` and, cumulatively, in each
 * `message_delta`; a field the delta leaves null keeps its earlier value.
 */
function applyUsage(
  usage: Usage,
  reported: {
    input_tokens: number | null;
    output_tokens: number | null;
    cache_read_input_tokens?: number | null;
    cache_creation_input_tokens?: number | null;
  },
): void {
  usage.input_tokens = reported.input_tokens ?? usage.input_tokens;
  usage.output_tokens = reported.output_tokens ?? usage.output_tokens;
  usage.cache_read_tokens = reported.cache_read_input_tokens ?? usage.cache_read_tokens;
  usage.cache_write_tokens = reported.cache_creation_input_tokens ?? usage.cache_write_tokens;
}
