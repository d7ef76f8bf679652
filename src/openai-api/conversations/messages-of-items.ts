import type { UserInputBlock } from "../../core/attachment-input.js";
import { blockOfPart, type InputPart } from "../items/block-of-part.js";
import { toolCallsOf, type AssistantBlock, type NewMessage, type ToolResultBlock } from "../../core/messages.js";
import { FINISH_TOOL } from "../../core/run-settings.js";
import { TOOL_NAME } from "../../tools/define-tool.js";
import { AppError } from "../../errors.js";

/** A content part of a message item, as a client sends it. */
export type ItemPart = InputPart | { type: "refusal"; refusal: string };

/** An item a client adds to a conversation (`items` of `POST /v1/conversations` and `…/items`). */
export type ConversationInputItem =
  | { type?: "message" | undefined; role: "user" | "assistant" | "system" | "developer"; content: string | ItemPart[] }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string | ItemPart[]; is_error?: boolean | undefined };

/** A message to append, as loopd will save it; a user message's blocks are still as sent (attachments not stored yet). */
export type DraftMessage =
  | { role: "user"; blocks: UserInputBlock[]; item: number }
  | { role: "assistant"; content: AssistantBlock[] }
  | { role: "tool"; content: [ToolResultBlock] };

/** Anthropic takes only these in a tool call's id; OpenAI's own (`call_…`) are of them. */
const CALL_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Items as the loopd messages they append, checked so that the history they
 * make is one every provider takes: a `function_call_output` answers a call
 * still waiting for one (`pending`: those of the history's last assistant
 * message, then the ones these items add), and no message comes between a
 * call and its output. Consecutive assistant items (a message, then its
 * calls) make one assistant message, as a model's turn is stored. `param`
 * names the item at fault (`items[2].call_id`, or as `paramOf` names it).
 */
export function messagesOfItems(
  items: readonly ConversationInputItem[],
  {
    pending,
    takenCallIds,
    paramOf = (i) => `items[${i}]`,
  }: {
    /** The calls of the history's last assistant message that have no output yet, by id. */
    pending: ReadonlyMap<string, string>;
    /** Call ids the conversation already holds. */
    takenCallIds: ReadonlySet<string>;
    /** The request's name for item `i`. @default `items[i]` */
    paramOf?: ((index: number) => string) | undefined;
  },
): DraftMessage[] {
  const waiting = new Map(pending);
  const seen = new Set<string>();
  const drafts: DraftMessage[] = [];
  /** The assistant message these items are adding to (a call joins it), if the last draft is one. */
  const openAssistant = () => {
    const last = drafts.at(-1);
    return last?.role === "assistant" ? last : undefined;
  };
  const noneWaiting = (i: number) => {
    if (waiting.size > 0)
      throw invalid(
        paramOf(i),
        `function_call ${[...waiting.keys()].join(", ")} has no output yet: add its function_call_output first`,
      );
  };
  items.forEach((item, i) => {
    const param = paramOf(i);
    switch (item.type) {
      case "function_call": {
        if (!CALL_ID.test(item.call_id))
          throw invalid(`${param}.call_id`, "must be 1 to 64 letters, digits, _ or - (as every provider takes it)");
        if (takenCallIds.has(item.call_id) || seen.has(item.call_id))
          throw invalid(`${param}.call_id`, `${item.call_id} is the id of a call the conversation already holds`);
        if (!TOOL_NAME.test(item.name) || item.name === FINISH_TOOL)
          throw invalid(`${param}.name`, "must be 1 to 64 letters, digits, _ or - (and not loopd's own finish)");
        // A call after an output or a user's message starts the model's next turn.
        if (!openAssistant()) noneWaiting(i);
        const call = { type: "tool_call" as const, id: item.call_id, name: item.name, ...inputOf(item.arguments) };
        const open = openAssistant();
        if (open) open.content.push(call);
        else drafts.push({ role: "assistant", content: [call] });
        seen.add(item.call_id);
        waiting.set(item.call_id, item.name);
        return;
      }
      case "function_call_output": {
        const name = waiting.get(item.call_id);
        if (name === undefined)
          throw invalid(
            `${param}.call_id`,
            `no function_call ${item.call_id} waits for an output (an output follows its call, once, before any other message)`,
          );
        waiting.delete(item.call_id);
        const output = outputText(item.output, param);
        drafts.push({
          role: "tool",
          content: [
            {
              type: "tool_result",
              tool_call_id: item.call_id,
              name,
              content: output,
              is_error: item.is_error ?? false,
            },
          ],
        });
        return;
      }
      default: {
        noneWaiting(i);
        if (item.role === "system" || item.role === "developer")
          throw invalid(
            `${param}.role`,
            "system and developer messages are not kept in a conversation: loopd keeps them as its system prompt (instructions of each response)",
          );
        const parts =
          typeof item.content === "string" ? [{ type: "input_text" as const, text: item.content }] : item.content;
        if (parts.length === 0) throw invalid(`${param}.content`, "must hold at least one part");
        if (item.role === "assistant") {
          const text = parts.map((part, j) => assistantText(part, `${param}.content[${j}]`)).join("");
          drafts.push({ role: "assistant", content: [{ type: "text", text }] });
          return;
        }
        drafts.push({
          role: "user",
          blocks: parts.map((part, j) => userBlockOf(part, `${param}.content[${j}]`)),
          item: i,
        });
      }
    }
  });
  return drafts;
}

/** The calls of a history's tail that have no result yet, by id (with their names). */
export function pendingCalls(tail: readonly NewMessage[]): Map<string, string> {
  const lastAssistant = tail.findLastIndex((m) => m.role === "assistant" && !m.excluded);
  const waiting = new Map<string, string>();
  if (lastAssistant < 0) return waiting;
  for (const call of toolCallsOf(tail[lastAssistant]!)) waiting.set(call.id, call.name);
  for (const m of tail.slice(lastAssistant + 1)) if (m.role === "tool") waiting.delete(m.content[0].tool_call_id);
  return waiting;
}

/** A call's arguments as loopd keeps them: a JSON object as `input`, anything else verbatim beside `{}`. */
function inputOf(args: string): { input: Record<string, unknown>; raw_arguments?: string } {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed))
      return { input: parsed as Record<string, unknown> };
  } catch {
    // Not JSON: kept as the model would have said it.
  }
  return { input: {}, raw_arguments: args };
}

function outputText(output: string | ItemPart[], param: string): string {
  if (typeof output === "string") return output;
  return output
    .map((part, j) => {
      if (part.type === "input_text" || part.type === "output_text") return part.text;
      throw invalid(`${param}.output[${j}]`, "a function_call_output takes text here (input_text parts)");
    })
    .join("");
}

function assistantText(part: ItemPart, param: string): string {
  if (part.type === "input_text" || part.type === "output_text") return part.text;
  if (part.type === "refusal") return part.refusal;
  throw invalid(param, "an assistant message takes text only (output_text parts)");
}

/** A user message's part as loopd's block: text; an image by http(s) or base64 data: URL; a PDF or text file as base64. */
function userBlockOf(part: ItemPart, param: string): UserInputBlock {
  if (part.type === "refusal") throw invalid(param, "a refusal part belongs to an assistant message");
  return blockOfPart(part, param);
}

const invalid = (param: string, message: string) =>
  new AppError("invalid_request", `${param}: ${message}`, { field: `body.${param}` });
