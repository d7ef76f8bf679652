import type { AssistantBlock, Message, ToolCallBlock } from "../../core/messages.js";
import { FINISH_TOOL } from "../../core/run-settings.js";
import { AppError } from "../../errors.js";
import { itemIds, type Item } from "../items/index.js";

/** A change to a stored message that an item's deletion makes. */
export interface MessageChange {
  seq: number;
  content: Message["content"];
  excluded: "deleted" | null;
}

/**
 * What deleting `item` changes in the history, so that no call is left
 * without its result and no result without its call: a user's message is
 * emptied; an assistant message's text leaves its calls in place (its
 * `finish` call and result go with it, as they are its text); an `mcp_call`
 * takes its call and its result together; a `function_call` goes only while
 * it has no output; a `function_call_output` or a denial (an
 * `mcp_approval_response`) would leave its call without a result (400).
 * A message left with nothing is kept as a row marked `deleted`.
 */
export function changesOfDeletion(messages: readonly Message[], item: Item): MessageChange[] {
  const changes = new Map<number, MessageChange>();
  const current = (m: Message) => (changes.get(m.seq)?.content ?? m.content) as AssistantBlock[];
  const keep = (m: Message, content: AssistantBlock[]) =>
    changes.set(m.seq, content.length === 0 ? emptied(m) : { seq: m.seq, content, excluded: null });
  const resultsOf = (callId: string) =>
    messages.filter((m) => m.role === "tool" && !m.excluded && m.content[0].tool_call_id === callId);
  const dropCall = (callId: string) => {
    const holder = messages.find(
      (m) => !m.excluded && m.role === "assistant" && callsOf(m).some((c) => c.id === callId),
    );
    if (holder)
      keep(
        holder,
        current(holder).filter((b) => !(b.type === "tool_call" && b.id === callId)),
      );
    for (const result of resultsOf(callId)) changes.set(result.seq, emptied(result));
  };
  switch (item.type) {
    case "message": {
      const message = messages.find((m) => messageItemId(m) === item.id)!;
      if (message.role !== "assistant") {
        changes.set(message.seq, emptied(message));
        break;
      }
      const finish = callsOf(message).find((c) => c.name === FINISH_TOOL);
      keep(
        message,
        callsOf(message).filter((b) => b.name !== FINISH_TOOL),
      );
      if (finish) for (const result of resultsOf(finish.id)) changes.set(result.seq, emptied(result));
      break;
    }
    case "mcp_call":
      dropCall(callIdOf(messages, item.id));
      break;
    case "function_call":
      if (resultsOf(item.call_id).length > 0)
        throw unpaired(item.id, `its output would be left without its call: a call and its output stay together`);
      dropCall(item.call_id);
      break;
    case "function_call_output":
    case "mcp_approval_response":
      throw unpaired(item.id, "its call would be left without a result: a call and its output stay together");
    case "mcp_approval_request":
      // Only a paused run's pending call shows as one, and a conversation with an open run changes nothing.
      throw new AppError("conversation_busy", `item ${item.id} is a call a paused run waits on`);
  }
  return [...changes.values()];
}

/** The id of a message's `message` item, as `itemsOfMessages` works it out: a run's answer by its run and place. */
const messageItemId = (m: Message) =>
  m.role === "assistant" && m.run_id !== null ? itemIds.answer(m.run_id, m.seq) : itemIds.message(m.id);

const callsOf = (m: Message): ToolCallBlock[] =>
  m.role === "assistant" ? m.content.filter((b): b is ToolCallBlock => b.type === "tool_call") : [];

/** The call an `mcp_call` item stands for (its id is worked out from the call's). */
function callIdOf(messages: readonly Message[], itemId: string): string {
  for (const m of messages) for (const c of callsOf(m)) if (itemIds.mcpCall(c.id) === itemId) return c.id;
  throw new AppError("not_found", `item ${itemId} does not exist`);
}

/** A message as deletion leaves it: no content (a result keeps which call it answered, so the history still reads), marked `deleted`. */
function emptied(m: Message): MessageChange {
  if (m.role !== "tool") return { seq: m.seq, content: [], excluded: "deleted" };
  const [{ tool_call_id, name, is_error }] = m.content;
  return {
    seq: m.seq,
    content: [{ type: "tool_result", tool_call_id, name, content: "", is_error }],
    excluded: "deleted",
  };
}

const unpaired = (itemId: string, why: string) =>
  new AppError("invalid_request", `item ${itemId} cannot be deleted: ${why}`, { field: "path.item_id" });
