import { openAIPartProblem } from "./validate-media.js";
import { type JsonObject, isJsonObject } from "./json-object.js";
import type { WireError } from "./wire-api.js";

/**
 * The Chat Completions request checks that matter to loopd, with the real
 * error messages. Returns the first problem, or null when the request would
 * be accepted.
 */

const ROLES = ["system", "developer", "user", "assistant", "tool", "function"];

/** How OpenAI names a wrong JSON type: "an object", "a number", "null". */
function jsonTypeName(value: unknown): string {
  if (value === null) return "null";
  const type = Array.isArray(value) ? "array" : typeof value;
  return `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
}

function checkTopLevel(body: JsonObject): WireError | null {
  if (typeof body.model !== "string" || body.model === "") return { message: "you must provide a model parameter" };
  if (body.messages === undefined) {
    return {
      message: "Missing required parameter: 'messages'.",
      param: "messages",
      code: "missing_required_parameter",
    };
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return {
      message:
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      param: "messages",
      code: "empty_array",
    };
  }
  const tools = Array.isArray(body.tools) ? body.tools : [];
  for (const [i, tool] of tools.entries()) {
    const fn = isJsonObject(tool) && isJsonObject(tool.function) ? tool.function : undefined;
    const parameters = fn?.parameters;
    if (parameters === undefined) continue;
    const type = isJsonObject(parameters) ? parameters.type : undefined;
    if (type !== "object") {
      return {
        message: `Invalid schema for function '${String(fn?.name)}': schema must be a JSON Schema of 'type: "object"', got 'type: "${String(type)}"'.`,
        param: `tools[${i}].function.parameters`,
        code: "invalid_function_parameters",
      };
    }
  }
  return null;
}

function unanswered(ids: Set<string>): WireError {
  return {
    message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...ids].join(", ")}`,
    param: "messages",
  };
}

export function validateOpenAiRequest(body: unknown): WireError | null {
  if (!isJsonObject(body)) return { message: "We could not parse the JSON body of your request." };
  const topLevel = checkTopLevel(body);
  if (topLevel !== null) return topLevel;

  const messages = (body.messages as unknown[]).map((m) => (isJsonObject(m) ? m : {}));
  // The ids of the assistant tool_calls still waiting for their tool messages.
  let open: { asked: Set<string>; waiting: Set<string> } | null = null;
  for (const [i, message] of messages.entries()) {
    if (!ROLES.includes(String(message.role))) {
      return {
        message: `Invalid value: '${String(message.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        param: `messages[${i}].role`,
        code: "invalid_value",
      };
    }
    if (message.role === "user" && Array.isArray(message.content)) {
      for (const [j, part] of message.content.entries()) {
        const problem = isJsonObject(part) ? openAIPartProblem(part, `messages[${i}].content[${j}]`) : null;
        if (problem !== null) return { message: problem, param: `messages[${i}].content[${j}]`, code: "invalid_value" };
      }
    }
    if (message.role === "tool") {
      if (open === null) {
        return {
          message:
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: "messages",
        };
      }
      const id = String(message.tool_call_id);
      if (!open.asked.has(id)) {
        return {
          message: `Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`,
          param: `messages.[${i}].tool_call_id`,
        };
      }
      open.waiting.delete(id);
      continue;
    }
    if (open !== null && open.waiting.size > 0) return unanswered(open.waiting);
    open = null;
    if (message.role !== "assistant") continue;
    const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isJsonObject) : [];
    if (toolCalls.length === 0) {
      if (message.content === null || message.content === undefined) {
        return {
          message: "Invalid value for 'content': expected a string, got null.",
          param: `messages.[${i}].content`,
        };
      }
      continue;
    }
    for (const [j, call] of toolCalls.entries()) {
      const args = isJsonObject(call.function) ? call.function.arguments : undefined;
      if (args === undefined) {
        return {
          message: `Missing required parameter: 'messages[${i}].tool_calls[${j}].function.arguments'.`,
          param: `messages[${i}].tool_calls[${j}].function.arguments`,
          code: "missing_required_parameter",
        };
      }
      if (typeof args !== "string") {
        return {
          message: `Invalid type for 'messages[${i}].tool_calls[${j}].function.arguments': expected a string, but got ${jsonTypeName(args)} instead.`,
          param: `messages[${i}].tool_calls[${j}].function.arguments`,
          code: "invalid_type",
        };
      }
    }
    const ids = toolCalls.map((call) => String(call.id));
    open = { asked: new Set(ids), waiting: new Set(ids) };
  }
  return open !== null && open.waiting.size > 0 ? unanswered(open.waiting) : null;
}
