import { toolCallsOf, type Message } from "../../core/messages.js";
import { presentMessage, presentRun } from "../../conversations/present.js";
import { FINISH_TOOL } from "../../core/run-settings.js";
import type { Services } from "../../services.js";
import type { OpenaiResponseRow, RunRow } from "../../store/schema.js";
import { itemsOfMessages } from "../items/items-of-messages.js";
import type { Item, OutputItem } from "../items/openai-items.js";
import { presentResponse, type ResponseEcho, type ResponseResource } from "./present-response.js";

/** A response as kept (a row), or as just made: what reading it back needs. */
export interface ResponseRecord {
  id: string;
  tenant: string;
  createdAt: Date;
  conversationId: string;
  runId: string;
  afterEvent: number;
  fromSeq: number | null;
  previousResponseId: string | null;
  background: boolean;
  echo: ResponseEcho;
}

export const recordOf = (row: OpenaiResponseRow): ResponseRecord => ({
  ...row,
  tenant: row.tenantId,
  echo: row.request as unknown as ResponseEcho,
});

/** The calls of a history that are the client's: every call but to the conversation's server tools and `finish`. */
export function clientToolsIn(messages: readonly Message[], serverTools: readonly string[]): Set<string> {
  const names = new Set<string>();
  const note = (name: string) => {
    if (name !== FINISH_TOOL && !serverTools.includes(name)) names.add(name);
  };
  for (const m of messages) {
    if (m.role === "tool") note(m.content[0].name);
    else if (m.role === "assistant") for (const b of m.content) if (b.type === "tool_call") note(b.name);
  }
  return names;
}

/**
 * A response's stretch of its run: its messages (from its first, up to the
 * next response of the same run, which answered the pause this one ended
 * with), the client's tools among its calls, and whether it ended at a pause.
 */
async function stretchOf({ store }: Pick<Services, "store">, record: ResponseRecord, run: RunRow) {
  const next = await store.openaiResponses.nextOfRun(record.runId, record.afterEvent);
  const fromSeq = record.fromSeq ?? run.firstSeq;
  const rows =
    fromSeq === null
      ? []
      : await store.messages.ofRun({ conversationId: record.conversationId, runId: run.id, firstSeq: fromSeq });
  const endSeq = next?.fromSeq ?? Infinity;
  const messages = rows.filter((m) => m.seq < endSeq).map(presentMessage);
  const conversation = await store.conversations.get(record.tenant, record.conversationId);
  // An answer's stretch begins with the results of calls the paused step made: those calls, from before it.
  const earlier =
    record.afterEvent > 0 && fromSeq !== null && run.firstSeq !== null
      ? await store.messages.ofRun({ conversationId: record.conversationId, runId: run.id, firstSeq: run.firstSeq })
      : [];
  const earlierCalls = earlier
    .filter((m) => m.seq < fromSeq! && m.role === "assistant")
    .flatMap((m) => toolCallsOf(presentMessage(m)));
  const serverTools = conversation?.tools ?? [];
  return {
    next,
    messages,
    earlierCalls,
    clientTools: clientToolsIn([...messages, ...earlier.map(presentMessage)], serverTools),
  };
}

/** A response as `GET /v1/responses/:id` shows it; undefined when its run is gone (its conversation deleted). */
export async function readResponse(
  services: Pick<Services, "store">,
  record: ResponseRecord,
): Promise<ResponseResource | undefined> {
  const run = await services.store.runs.getOfTenant(record.tenant, record.runId);
  if (!run) return undefined;
  const { next, messages, clientTools, earlierCalls } = await stretchOf(services, record, run);
  // A later response answered this one's pause: this one ended there, `completed`.
  const view = next ? { ...presentRun(run), status: "requires_action" } : presentRun(run);
  const pending = next ? pendingAtPause(messages) : (run.requiredAction?.tool_calls ?? []);
  const output = itemsOfMessages(messages, { clientTools, pending, earlierCalls, include: "output" }) as OutputItem[];
  return presentResponse({
    ...record,
    completedAt: next ? (messages.at(-1)?.created_at ?? null) : (run.completedAt ?? run.pausedAt),
    run: view,
    output,
  });
}

/** What a response that ended at a pause waited on, as far as the history tells: its calls without a result then. */
function pendingAtPause(messages: Message[]) {
  const answered = new Set(messages.flatMap((m) => (m.role === "tool" ? [m.content[0].tool_call_id] : [])));
  const last = messages.filter((m) => m.role === "assistant").at(-1);
  if (!last || last.role !== "assistant") return [];
  return last.content.flatMap((b) =>
    b.type === "tool_call" && !answered.has(b.id)
      ? [{ tool_call_id: b.id, name: b.name, input: b.input, action: "approve" as const }]
      : [],
  );
}

/** The items a response was given: the user's message, the client's function outputs, the person's denials. */
export async function inputItemsOf(services: Pick<Services, "store">, record: ResponseRecord): Promise<Item[]> {
  const run = await services.store.runs.getOfTenant(record.tenant, record.runId);
  if (!run) return [];
  const { messages, clientTools } = await stretchOf(services, record, run);
  return itemsOfMessages(messages, { clientTools, include: "all" }).filter(
    (item) =>
      (item.type === "message" && item.role === "user") ||
      item.type === "function_call_output" ||
      item.type === "mcp_approval_response",
  );
}
