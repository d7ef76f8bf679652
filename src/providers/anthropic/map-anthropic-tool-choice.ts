import type Anthropic from "@anthropic-ai/sdk";
import type { NewMessage } from "../../core/messages.js";
import type { ToolChoice, ToolSpec } from "../../core/model-provider.js";
import { perObject } from "../../util/per-object.js";
import { objectSchemaOf } from "../shared/object-schema.js";

/** loopd's tool choice → Anthropic's (`required` is Anthropic's `any`). */
export function mapAnthropicToolChoice(toolChoice: ToolChoice): Anthropic.ToolChoice {
  if (typeof toolChoice === "object") return { type: "tool", name: toolChoice.name };
  switch (toolChoice) {
    case "auto":
      return { type: "auto" };
    case "none":
      return { type: "none" };
    case "required":
      return { type: "any" };
  }
}

/**
 * The `tools` and `tool_choice` request params. With no tools both are
 * omitted, except when the history already holds tool calls: Anthropic then
 * answers 400 ("Requests which include tool_use or tool_result blocks must
 * define tools"), so the tools named in the history are declared with an
 * open schema and `tool_choice: none`, which lets the model read the old
 * calls without making new ones.
 */
export function toAnthropicToolParams({
  tools,
  toolChoice,
  messages,
}: {
  tools: readonly ToolSpec[];
  toolChoice: ToolChoice;
  messages: readonly NewMessage[];
}): { tools?: Anthropic.Tool[]; tool_choice?: Anthropic.ToolChoice } {
  if (tools.length > 0) {
    return {
      tools: anthropicToolsOf(tools),
      tool_choice: mapAnthropicToolChoice(toolChoice),
    };
  }
  const historyToolNames = new Set(
    messages.flatMap((m) =>
      m.role === "assistant"
        ? m.content.flatMap((b) => (b.type === "tool_call" ? [b.name] : []))
        : m.role === "tool"
          ? m.content.map((b) => b.name)
          : [],
    ),
  );
  if (historyToolNames.size === 0) return {};
  return {
    tools: [...historyToolNames].map((name) => ({
      name,
      description: "No longer available in this conversation.",
      input_schema: { type: "object" },
    })),
    tool_choice: { type: "none" },
  };
}

const anthropicToolOf = perObject((t: ToolSpec): Anthropic.Tool => ({
  name: t.name,
  description: t.description,
  input_schema: objectSchemaOf(t.inputSchema),
}));
/** Shared between requests: never changed (a cache breakpoint goes on a copy). */
const anthropicToolsOf = perObject((tools: readonly ToolSpec[]): Anthropic.Tool[] => tools.map(anthropicToolOf));
