import type OpenAI from "openai";
import type { ToolChoice, ToolSpec } from "../../core/model-provider.js";
import { perObject } from "../../util/per-object.js";
import { objectSchemaOf } from "../shared/object-schema.js";

/** loopd's tool choice → Chat Completions' (`{name}` names a function). */
export function mapOpenAIToolChoice(toolChoice: ToolChoice): OpenAI.ChatCompletionToolChoiceOption {
  if (typeof toolChoice === "object") return { type: "function", function: { name: toolChoice.name } };
  return toolChoice;
}

/**
 * The `tools` and `tool_choice` request params; both are left out when there
 * are no tools, since the API rejects a `tool_choice` without `tools`. (Unlike
 * Anthropic, Chat Completions accepts old tool calls in the history without
 * their tools.)
 */
export function toOpenAIToolParams({ tools, toolChoice }: { tools: readonly ToolSpec[]; toolChoice: ToolChoice }): {
  tools?: OpenAI.ChatCompletionFunctionTool[];
  tool_choice?: OpenAI.ChatCompletionToolChoiceOption;
} {
  if (tools.length === 0) return {};
  return {
    tools: openAIToolsOf(tools),
    tool_choice: mapOpenAIToolChoice(toolChoice),
  };
}

const openAIToolOf = perObject((t: ToolSpec): OpenAI.ChatCompletionFunctionTool => ({
  type: "function",
  function: { name: t.name, description: t.description, parameters: objectSchemaOf(t.inputSchema) },
}));
const openAIToolsOf = perObject((tools: readonly ToolSpec[]) => tools.map(openAIToolOf));
