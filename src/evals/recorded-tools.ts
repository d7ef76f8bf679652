import { z } from "zod";
import { canonicalJson } from "../runs/trace/body-hash.js";
import { ToolErrorResult, type Tool } from "../tools/define-tool.js";
import type { RecordedResult } from "./eval-case.js";

/** The result of a call no recorded result answers (an error result: the model reads it, no tool runs). */
export const RECORDED_MISS = "no recorded result for this call";

/** A call's recorded result, or null: matched by name and input (canonical JSON: key order does not count). */
export type RecordedLookup = (call: { name: string; input: unknown }) => RecordedResult | null;

const keyOf = (name: string, input: unknown) => `${name}\u0000${canonicalJson(input ?? {})}`;

/**
 * Answers calls from a run's recorded tool results. Calls with one name and
 * input that came several times are answered in the order they came; past
 * the last, the last answers again.
 */
export function recordedLookup(recorded: readonly RecordedResult[]): RecordedLookup {
  const byKey = new Map<string, RecordedResult[]>();
  for (const r of recorded) {
    const key = keyOf(r.name, r.input);
    byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  const used = new Map<string, number>();
  return ({ name, input }) => {
    const key = keyOf(name, input);
    const results = byKey.get(key);
    if (!results) return null;
    const n = used.get(key) ?? 0;
    used.set(key, n + 1);
    return results[Math.min(n, results.length - 1)]!;
  };
}

/** Calls to eval cases' tools answered per conversation: each case's conversation has its own recorded results. */
export interface RecordedAnswers {
  /** Makes `lookup` answer the calls made in `conversationId`. */
  set(conversationId: string, lookup: RecordedLookup): void;
  delete(conversationId: string): void;
  /** The tools as the model sees them (same names, descriptions, schemas), answering from the recordings and running nothing. */
  standIns(tools: readonly Tool[]): Tool[];
}

export function createRecordedAnswers(): RecordedAnswers {
  const lookups = new Map<string, RecordedLookup>();
  const answer = (name: string, input: unknown, conversationId: string | null) => {
    const found = conversationId === null ? null : (lookups.get(conversationId)?.({ name, input }) ?? null);
    if (!found) throw new ToolErrorResult(RECORDED_MISS);
    if (found.is_error) throw new ToolErrorResult(found.content);
    return found.content;
  };
  return {
    set: (conversationId, lookup) => void lookups.set(conversationId, lookup),
    delete: (conversationId) => void lookups.delete(conversationId),
    standIns: (tools) =>
      tools.map((tool): Tool => ({
        ...tool,
        // The input as the model sent it: a recorded call is matched on that, before any default is filled in.
        input: z.unknown(),
        execute: (input, ctx) => answer(tool.name, input, ctx.conversationId),
        // A recorded result stands for whatever happened to the call, approved or declined.
        needsApproval: () => false,
        approval: "never",
      })),
  };
}
