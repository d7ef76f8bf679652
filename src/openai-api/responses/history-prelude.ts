import type { NewMessage } from "../../core/messages.js";
import type { Services } from "../../services.js";
import { historyOf } from "../../store/message-repository.js";
import type { Repositories } from "../../store/store.js";
import { saveDrafts } from "../conversations/add-items.js";
import { messagesOfItems, pendingCalls, type DraftMessage } from "../conversations/messages-of-items.js";
import { invalidItem as invalid } from "../items/block-of-part.js";
import { clipToolResult } from "../../tools/clip-tool-result.js";
import type { HistoryInput } from "../items/input-of-items.js";

/**
 * The prelude of a run whose request carries the client's own history (see
 * `RunToCreate.prelude`), run in the run's transaction under the
 * conversation's lock: the items checked against the conversation's end as
 * `/v1/conversations` checks them (an output follows its call, once; call
 * ids are new), then appended. When no user message follows them
 * (`opens`), the function outputs that end them are what the run opens with
 * and must answer every call still open; otherwise no call may be left
 * without its output. The model is never sent a broken history, and a 400
 * leaves nothing behind. Outputs are clipped as a paused run's answers are.
 */
export function historyPrelude(
  { config }: Pick<Services, "config">,
  {
    tenant,
    conversationId,
    history,
    opens,
  }: { tenant: string; conversationId: string; history: HistoryInput; opens: boolean },
): (tx: Repositories) => Promise<NewMessage[]> {
  const paramOf = (i: number) => history.params[i] ?? "input";
  return async (tx) => {
    const tail = historyOf(await tx.messages.sinceLastAssistant(conversationId));
    const callIds = history.items.flatMap((item) => (item.type === "function_call" ? [item.call_id] : []));
    const drafts = messagesOfItems(history.items, {
      pending: pendingCalls(tail),
      takenCallIds: await tx.messages.callIdsAmong(conversationId, callIds),
      paramOf,
    }).map((draft) => (draft.role === "tool" ? clipped(draft, config.tools.resultMaxChars) : draft));
    const waiting = pendingCalls([...tail, ...drafts.map(asMessage)]);
    for (const id of waiting.keys()) {
      const at = history.items.findIndex((item) => item.type === "function_call" && item.call_id === id);
      throw invalid(
        at < 0 ? "input" : paramOf(at),
        `function_call ${id} has no function_call_output: send the output of each call after it (a model is never sent a call without its result)`,
      );
    }
    let split = drafts.length;
    if (opens) while (split > 0 && drafts[split - 1]!.role === "tool") split--;
    if (opens && split === drafts.length)
      throw invalid(
        paramOf(history.items.length - 1),
        "the input ends with an assistant message: end it with a user message, or with the function_call_output of each call, for the model to answer",
      );
    await saveDrafts(tx, {
      tenant,
      conversationId,
      drafts: drafts.slice(0, split),
      limits: config.attachments,
      fieldOf: (item, part) => `body.${paramOf(item)}.content[${part}]`,
    });
    return drafts.slice(split).map(asMessage);
  };
}

/** A draft as the history's message it will be (a user's blocks only matter once stored). */
const asMessage = (draft: DraftMessage): NewMessage => (draft.role === "user" ? { role: "user", content: [] } : draft);

/** A function's output as long as a paused run's answer may make it (`TOOL_RESULT_MAX_CHARS`). */
const clipped = (draft: DraftMessage & { role: "tool" }, maxChars: number): DraftMessage => {
  const [result] = draft.content;
  return { role: "tool", content: [{ ...result, content: clipToolResult(result.content, { maxChars }) }] };
};
