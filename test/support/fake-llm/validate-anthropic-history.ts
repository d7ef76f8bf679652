import { anthropicMediaProblem } from "./validate-media.js";
import { type JsonObject, isJsonObject } from "./json-object.js";
import { checkCacheControl } from "./prompt-cache.js";

/**
 * The Messages API's request checks that matter to loopd, with the real
 * error messages. Returns the first problem's message, or null when the
 * request would be accepted.
 */

const TOOL_USE_MISSING_RESULT =
  "Each `tool_use` block must have a corresponding `tool_result` block in the next message.";
const TOOL_RESULT_WITHOUT_USE =
  "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.";

/** Content as a list of blocks; a string is one text block. */
function blocksOf(message: JsonObject): JsonObject[] {
  const { content } = message;
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter(isJsonObject) : [];
}

function idsOf(message: JsonObject | undefined, type: "tool_use" | "tool_result"): string[] {
  if (message === undefined) return [];
  const key = type === "tool_use" ? "id" : "tool_use_id";
  return blocksOf(message)
    .filter((block) => block.type === type)
    .map((block) => String(block[key]));
}

function checkTopLevel(body: JsonObject): string | null {
  if (body.model === undefined) return "model: Field required";
  if (typeof body.model !== "string" || body.model === "") return "model: String should have at least 1 character";
  if (body.max_tokens === undefined) return "max_tokens: Field required";
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) {
    return "max_tokens: Input should be greater than or equal to 1";
  }
  if (body.messages === undefined) return "messages: Field required";
  if (!Array.isArray(body.messages)) return "messages: Input should be a valid list";
  if (body.messages.length === 0) return "messages: at least one message is required";
  return null;
}

function checkTools(body: JsonObject): string | null {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isJsonObject) : [];
  for (const [i, tool] of tools.entries()) {
    // Server tools (web_search_…) carry a dated type and no input_schema.
    if (tool.type !== undefined && tool.type !== "custom") continue;
    const schema = tool.input_schema;
    if (!isJsonObject(schema)) return `tools.${i}.custom.input_schema: Field required`;
    if (schema.type !== "object") return `tools.${i}.custom.input_schema.type: Input should be 'object'`;
  }
  const choice = body.tool_choice;
  if (isJsonObject(choice) && choice.type === "tool" && !tools.some((tool) => tool.name === choice.name)) {
    return `tool_choice.name: Tool '${String(choice.name)}' not found in provided tools`;
  }
  return null;
}

function checkMessage(messages: JsonObject[], n: number, seenToolUseIds: Set<string>): string | null {
  const message = messages[n]!;
  if (message.role !== "user" && message.role !== "assistant") {
    return `messages.${n}.role: Input should be 'user' or 'assistant'`;
  }
  const isFinalAssistant = n === messages.length - 1 && message.role === "assistant";
  const blocks = blocksOf(message);
  if (blocks.length === 0 && !isFinalAssistant) {
    return `messages.${n}: all messages must have non-empty content except for the optional final assistant message`;
  }
  for (const [m, block] of blocks.entries()) {
    if (block.type === "text" && (block.text === "" || typeof block.text !== "string")) {
      return "messages: text content blocks must be non-empty";
    }
    if (block.type === "text" && (block.text as string).trim() === "") {
      return "messages: text content blocks must contain non-whitespace text";
    }
    const media = anthropicMediaProblem(block, `messages.${n}.content.${m}`);
    if (media !== null) return media;
    if (block.type === "tool_use") {
      const id = String(block.id);
      if (seenToolUseIds.has(id)) return `messages.${n}.content.${m}: \`tool_use\` ids must be unique`;
      seenToolUseIds.add(id);
    }
    if (block.type === "tool_result") {
      const previous = messages[n - 1];
      const asked = previous?.role === "assistant" ? idsOf(previous, "tool_use") : [];
      if (!asked.includes(String(block.tool_use_id))) {
        return `messages.${n}.content.${m}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. ${TOOL_RESULT_WITHOUT_USE}`;
      }
      const inner = toolResultContentProblem(block.content, `messages.${n}.content.${m}.content`);
      if (inner !== null) return inner;
    }
  }
  if (message.role === "assistant") {
    const next = messages[n + 1];
    const answered = next?.role === "user" ? idsOf(next, "tool_result") : [];
    const missing = idsOf(message, "tool_use").filter((id) => !answered.includes(id));
    if (missing.length > 0) {
      return `messages.${n}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. ${TOOL_USE_MISSING_RESULT}`;
    }
  }
  return null;
}

/**
 * A tool_result's `content`: absent, a string, or a list of text, image and
 * document blocks (an image with its bytes checked as any image's).
 */
function toolResultContentProblem(content: unknown, where: string): string | null {
  if (content === undefined || typeof content === "string") return null;
  if (!Array.isArray(content)) return `${where}: Input should be a valid string or list`;
  for (const [k, block] of content.entries()) {
    if (!isJsonObject(block)) return `${where}.${k}: Input should be a valid dictionary`;
    if (block.type === "text") {
      if (typeof block.text !== "string" || block.text.trim() === "")
        return "messages: text content blocks must contain non-whitespace text";
      continue;
    }
    if (block.type !== "image" && block.type !== "document")
      return `${where}.${k}: Input tag '${String(block.type)}' found using 'type' does not match any of the expected tags: 'text', 'image', 'search_result', 'document'`;
    const media = anthropicMediaProblem(block, `${where}.${k}`);
    if (media !== null) return media;
  }
  return null;
}

export function validateAnthropicRequest(body: unknown): string | null {
  if (!isJsonObject(body)) return "Input should be a valid dictionary";
  const topLevel = checkTopLevel(body) ?? checkTools(body) ?? checkCacheControl(body);
  if (topLevel !== null) return topLevel;
  const messages = (body.messages as unknown[]).map((m) => (isJsonObject(m) ? m : {}));
  if (messages[0]!.role !== "user") return 'messages: first message must use the "user" role';
  const seenToolUseIds = new Set<string>();
  for (let n = 0; n < messages.length; n++) {
    const problem = checkMessage(messages, n, seenToolUseIds);
    if (problem !== null) return problem;
  }
  return null;
}
