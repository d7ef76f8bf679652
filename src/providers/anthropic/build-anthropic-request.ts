import type Anthropic from "@anthropic-ai/sdk";
import type { ModelRequestBody } from "../../core/model-provider.js";
import { perObject } from "../../util/per-object.js";
import { toAnthropicToolParams } from "./map-anthropic-tool-choice.js";
import { toAnthropicHistory } from "./to-anthropic-history.js";

type Body = Anthropic.MessageCreateParamsStreaming;
type Block = Anthropic.ContentBlockParam;

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * The Messages API request for a model call. With caching on (a cache
 * key), it carries at most four `cache_control` breakpoints, each on the
 * last block of a prefix that later requests repeat:
 *
 * 1. the last tool (the tools are the request's start),
 * 2. the system prompt (tools + system),
 * 3. the end of the previous step's request (the user turn before the last
 *    assistant turn): its prefix was written by that call, so this one reads
 *    it even when the last step added more than the 20 blocks the API looks
 *    back from a breakpoint,
 * 4. the end of the history (the moving breakpoint), written for the next call.
 */
export function buildAnthropicRequest(request: ModelRequestBody, defaultModel: string): Body {
  const history = toAnthropicHistory(request.system, request.messages, request.attachments);
  const toolParams = toAnthropicToolParams(request);
  const caching = Boolean(request.cacheKey);
  const messages = history.messages;
  if (caching) {
    const last = messages.length - 1;
    // Turns alternate: the one before the last assistant turn is a user turn.
    const previousEnd = messages.findLastIndex((m) => m.role === "assistant") - 1;
    for (const i of new Set([previousEnd, last])) if (i >= 0) messages[i] = withBreakpointAtEnd(messages[i]!);
  }
  if (caching && toolParams.tools) toolParams.tools = withBreakpointOnLastTool(toolParams.tools);
  let system: Body["system"] | undefined;
  if (history.system !== null)
    system = caching ? [{ type: "text", text: history.system, cache_control: EPHEMERAL }] : history.system;
  return {
    model: request.model || defaultModel,
    max_tokens: request.maxTokens,
    messages,
    ...(system === undefined ? {} : { system }),
    ...toolParams,
    stream: true,
  };
}

/** The turn with a breakpoint on its last block; the turn and the block are copied (converted blocks are shared between requests). */
function withBreakpointAtEnd(turn: Anthropic.MessageParam): Anthropic.MessageParam {
  const content =
    typeof turn.content === "string" ? [{ type: "text", text: turn.content } as Block] : [...turn.content];
  const end = content.length - 1;
  if (end < 0) return turn;
  content[end] = { ...content[end]!, cache_control: EPHEMERAL } as Block;
  return { ...turn, content } as Anthropic.MessageParam;
}

/** The tools with a breakpoint on the last one: a copy, made once per tools array (the array is shared between requests). */
const withBreakpointOnLastTool = perObject((tools: Anthropic.Tool[]): Anthropic.Tool[] =>
  tools.length === 0 ? tools : [...tools.slice(0, -1), { ...tools.at(-1)!, cache_control: EPHEMERAL }],
);
