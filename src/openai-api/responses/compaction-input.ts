import type { NewMessage } from "../../core/messages.js";
import { AppError, notFound } from "../../errors.js";
import type { Services } from "../../services.js";
import { openAiError } from "../openai-errors.js";
import { compactionKey } from "./compaction-key.js";
import { CompactionRefused, openCompaction } from "./compaction-seal.js";

type Item = { type?: string | undefined; role?: string | undefined };
type Compaction = { type: "compaction"; encrypted_content: string };
const isCompaction = (item: Item): item is Item & Compaction => item.type === "compaction";

/** The line a compaction's summary is sent under: what it is, in the model's history. */
export const COMPACTION_HEADER =
  "[Summary of the conversation before this point, written by loopd when it was compacted; the messages themselves are no longer sent]";

/**
 * Each compaction item of `input` opened with this server's key for this
 * tenant: its summary by the item's index. One that does not open (changed,
 * cut, another tenant's, not loopd's) is a 400 naming it, before anything is done.
 */
export function openCompactionItems(key: Buffer, tenant: string, input: string | readonly Item[]): Map<number, string> {
  const opened = new Map<number, string>();
  if (typeof input === "string") return opened;
  input.forEach((item, i) => {
    if (!isCompaction(item)) return;
    try {
      opened.set(i, openCompaction(key, tenant, item.encrypted_content).summary);
    } catch (err) {
      if (!(err instanceof CompactionRefused)) throw err;
      throw openAiError("invalid_request", `The encrypted content of input[${i}] ${err.message}.`, {
        param: `input[${i}].encrypted_content`,
        openaiCode: "invalid_encrypted_content",
      });
    }
  });
  return opened;
}

/**
 * A `/v1/responses` input that carries compaction items: the newest one
 * stands for everything before it, so what goes on is its summary (as a
 * message loopd writes into the history before the run's) and the items
 * after it, read by `read`; instructions (`system`, `developer`) before it
 * are kept. Without one: the input as `read` reads it, and no message. A
 * 400 of `read` names the item by its place in the request's `input`.
 */
export async function compactionOfInput<T extends Item, R>(
  services: Pick<Services, "config" | "store">,
  {
    tenant,
    input,
    read,
  }: { tenant: string; input: string | readonly T[]; read: (input: string | Exclude<T, Compaction>[]) => R },
): Promise<{ input: R; message: NewMessage | null; placeOf: (param: string) => string }> {
  if (typeof input === "string" || !input.some(isCompaction))
    return { input: read(input as string | Exclude<T, Compaction>[]), message: null, placeOf: (param) => param };
  const opened = openCompactionItems(await compactionKey(services), tenant, input);
  const newest = Math.max(...opened.keys());
  const at = [...input.keys()].filter(
    (i) => !isCompaction(input[i]!) && (i > newest || input[i]!.role === "system" || input[i]!.role === "developer"),
  );
  const text = `${COMPACTION_HEADER}\n\n${opened.get(newest)!}`;
  const message: NewMessage = { role: "user", kind: "summary", content: [{ type: "text", text }] };
  try {
    return { input: read(at.map((i) => input[i]! as Exclude<T, Compaction>)), message, placeOf: placeIn(at) };
  } catch (err) {
    throw err instanceof AppError ? renumbered(err, placeIn(at)) : err;
  }
}

/** `input[i]` of the items `read` was given, named as `input[at[i]]` of the request's. */
const placeIn = (at: readonly number[]) => (s: string) =>
  s.replace(/input\[(\d+)\]/g, (_, i: string) => `input[${at[Number(i)] ?? i}]`);

/** An error about the items `read` was given, about the request's. */
function renumbered(err: AppError, fix: (s: string) => string): AppError {
  const field = err.details.field;
  if (typeof field !== "string") return err;
  return new AppError(err.code, fix(err.message), { ...err.details, field: fix(field) });
}

/**
 * Writes a compaction's message at the end of a conversation's history,
 * between runs (under the conversation's lock, as items are added): the
 * run that follows is sent it before its user's message.
 */
export async function writeCompaction(
  { store }: Pick<Services, "store">,
  { tenant, conversationId, message }: { tenant: string; conversationId: string; message: NewMessage },
): Promise<void> {
  await store.transaction(async (tx) => {
    if (!(await tx.queue.lockConversation(conversationId))) throw notFound("conversation", conversationId);
    const conversation = await tx.conversations.get(tenant, conversationId);
    if (!conversation) throw notFound("conversation", conversationId);
    if (conversation.activeRunId)
      throw new AppError(
        "conversation_busy",
        `conversation ${conversationId} has an open run (${conversation.activeRunId}): a compaction goes on between runs`,
        { active_run_id: conversation.activeRunId, field: "body.input" },
      );
    await tx.messages.append({ conversationId, runId: null, items: [message] });
  });
}
