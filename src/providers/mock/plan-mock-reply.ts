import type { AssistantBlock, NewMessage, ToolCallBlock, ToolResultBlock } from "../../core/messages.js";
import { textOf, toolCallsOf } from "../../core/messages.js";
import type { ModelRequest } from "../../core/model-provider.js";
import { describeAttachments } from "./describe-attachments.js";
import { describeToolResults } from "./describe-tool-results.js";
import { findArithmetic } from "./find-arithmetic.js";
import { findNamedCall } from "./find-named-call.js";
import { findTimezone, isTimeQuestion } from "./find-timezone.js";

/**
 * The rules read only the end of a long question: that is where a question
 * ends, and it bounds the mock's work whatever size of message a client sends.
 */
export const MOCK_INSPECTED_CHARS = 4096;

export interface MockReply {
  content: AssistantBlock[];
  stopReason: "tool_use" | "end_turn";
}

/**
 * What the mock "model" answers, as a pure function of the request, so the
 * same history always gets the same reply:
 *
 * 1. the history ends with tool results → a text answer built from them;
 * 2. the last user message (its last `MOCK_INSPECTED_CHARS` characters) names
 *    an offered tool followed by a JSON object → that call, with that input
 *    (`create_invoice {"customer": "ACME"}`; any tool, a client tool too);
 * 3. it asks
 *    the time somewhere and `get_current_time` may be called → that call, with the place mapped to an IANA zone;
 * 4. it holds an arithmetic expression and `calculate` may be called → that
 *    call;
 * 5. it is a question (it ends with `?`) and client tools are offered → a
 *    call of the first of them, its input filled from its schema (as a
 *    model offered an application's function tools would);
 * 6. anything else → a text reply that says what this provider is, after
 *    what it was shown besides text ("an image/png of 64×64 pixels") (also
 *    under `toolChoice: "required"`: a stand-in has nothing to force).
 *
 * Tool call ids are `mock_call_<n>`, n counting the calls in the history.
 */
export function planMockReply(request: Pick<ModelRequest, "messages" | "tools" | "toolChoice">): MockReply {
  const { messages } = request;
  // loopd's own notices (a budget's grace turn) come after the results they are about.
  let end = messages.length;
  while (end > 0 && messages[end - 1]!.role === "user" && (messages[end - 1] as { kind?: string }).kind === "notice")
    end--;
  const trailingResults = trailingToolResults(messages.slice(0, end));
  if (trailingResults.length > 0) {
    const calls = messages.flatMap(toolCallsOf);
    return endTurn(describeToolResults(trailingResults, calls));
  }

  const last = messages.at(-1);
  const question = last?.role === "user" ? textOf(last).trim() : "";
  const inspected = question.slice(-MOCK_INSPECTED_CHARS);
  const mayCall = (name: string): boolean =>
    request.tools.some((t) => t.name === name) &&
    request.toolChoice !== "none" &&
    (typeof request.toolChoice !== "object" || request.toolChoice.name === name);
  const nextId = `mock_call_${messages.flatMap(toolCallsOf).length + 1}`;

  const named = findNamedCall(inspected, request.tools.map((t) => t.name).filter(mayCall));
  if (named) return toolUse({ type: "tool_call", id: nextId, ...named });
  if (isTimeQuestion(inspected) && mayCall("get_current_time")) {
    return toolUse({
      type: "tool_call",
      id: nextId,
      name: "get_current_time",
      input: { timezone: findTimezone(inspected) },
    });
  }
  const expression = findArithmetic(inspected);
  if (expression !== null && mayCall("calculate")) {
    return toolUse({ type: "tool_call", id: nextId, name: "calculate", input: { expression } });
  }
  const clientTool = request.tools.find((t) => t.client && mayCall(t.name));
  if (clientTool && question.endsWith("?"))
    return toolUse({
      type: "tool_call",
      id: nextId,
      name: clientTool.name,
      input: sampleInput(clientTool.inputSchema, question),
    });
  return endTurn(describeAttachments(last?.role === "user" ? last.content : []) + offlineAnswer(question));
}

function trailingToolResults(messages: readonly NewMessage[]): ToolResultBlock[] {
  const results: ToolResultBlock[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== "tool") break;
    results.unshift(...message.content);
  }
  return results;
}

function offlineAnswer(question: string): string {
  const quoted = question.length > 200 ? `${question.slice(0, 200)}…` : question;
  const echo = quoted === "" ? "" : `You said: "${quoted}". `;
  return (
    `${echo}This reply comes from loopd's offline mock provider, a stand-in rather than a real model: ` +
    `it can only ask for the time somewhere ("What time is it in Tokyo?") or work out arithmetic ("What is (3+4)^2?") with the built-in tools. ` +
    `To talk to a real model, set ANTHROPIC_API_KEY or OPENAI_API_KEY and create the conversation with "provider": "anthropic" or "openai".`
  );
}

/** An input for a schema: each required string property the question, each other required property a value of its type. */
function sampleInput(schema: Record<string, unknown>, question: string): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const valueOf = (type: unknown): unknown =>
    type === "number" || type === "integer"
      ? 1
      : type === "boolean"
        ? true
        : type === "array"
          ? []
          : type === "object"
            ? {}
            : question;
  return Object.fromEntries(required.map((name) => [name, valueOf(properties[name]?.type)]));
}

const toolUse = (call: ToolCallBlock): MockReply => ({ content: [call], stopReason: "tool_use" });
const endTurn = (text: string): MockReply => ({ content: [{ type: "text", text }], stopReason: "end_turn" });
