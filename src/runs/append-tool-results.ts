import type { NewMessage, ToolResultBlock } from "../core/messages.js";
import type { RunRow } from "../store/schema.js";
import type { Repositories } from "../store/store.js";
import { messageSpanData } from "./trace/message-span.js";
import { toolSpan, type ToolSource } from "./trace/run-tracer.js";

/**
 * Saves tool results for a run outside its own writer (a pause answered or
 * ended), in the caller's transaction: at the end of the history, each
 * announced by its `message.created` (the message's own event id) then its
 * `tool_call.completed`, numbered from `firstEventSeq` on; with `sourceOf`,
 * each with its trace span (where the result came from).
 */
export async function appendToolResults(
  tx: Repositories,
  {
    run,
    results,
    firstEventSeq,
    sourceOf,
  }: { run: Pick<RunRow, "id" | "conversationId">; results: NewMessage[]; firstEventSeq: number; sourceOf?: ((result: ToolResultBlock) => ToolSource) | undefined },
): Promise<{ firstSeq: number; nextEventSeq: number }> {
  const firstSeq = (await tx.messages.lastSeq(run.conversationId)) + 1;
  const resultOf = (i: number) => (results[i]!.content as [ToolResultBlock])[0];
  await tx.messages.append({
    conversationId: run.conversationId,
    runId: run.id,
    items: results,
    firstSeq,
    eventSeqOf: (i) => firstEventSeq + 2 * i,
    ...(sourceOf && { spanOf: (i: number) => messageSpanData(toolSpan({ result: resultOf(i), seq: firstSeq + i, source: sourceOf(resultOf(i)) })) }),
  });
  await tx.events.append(
    run.id,
    results.map((_, i) => {
      const result = resultOf(i);
      return {
        seq: firstEventSeq + 2 * i + 1,
        type: "tool_call.completed",
        data: { tool_call_id: result.tool_call_id, name: result.name, is_error: result.is_error, duration_ms: 0, seq: firstSeq + i },
      };
    }),
  );
  return { firstSeq, nextEventSeq: firstEventSeq + 2 * results.length };
}
