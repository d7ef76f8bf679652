import { z } from "zod";
import { checkUserSchema } from "../json-schema/check-user-schema.js";
import type { NewMessage, ToolCallBlock } from "../core/messages.js";
import type { RunResult } from "../core/run-outcome.js";
import { FINISH_TOOL, type FinishOptions } from "../core/run-settings.js";
import { errorResultFor } from "../core/history.js";
import type { ToolSpec } from "../core/model-provider.js";

export const FINISH_NUDGE =
  "If the task is complete, call `finish` with a summary of what was done (and the result). If it is not, go on with the task.";

/** The `finish` tool as the model sees it. */
export function finishToolSpec({ result_schema: resultSchema }: FinishOptions): ToolSpec {
  return {
    name: FINISH_TOOL,
    description: "Call this once the task is complete, to end the run with a summary and, when asked for, a result.",
    inputSchema: {
      type: "object",
      properties: {
        summary: { type: "string", description: "What was done, in a few sentences." },
        confidence: {
          type: "number",
          minimum: 0,
          maximum: 1,
          description: "How sure you are the task is done right, 0 to 1.",
        },
        result: resultSchema ?? { description: "The task's result, if it has one." },
      },
      required: resultSchema ? ["summary", "result"] : ["summary"],
    },
  };
}

/** The loop's own tools for a run: `finish` when the run ends with one, else none. */
export const loopToolsOf = (finish: FinishOptions | null): ToolSpec[] => (finish ? [finishToolSpec(finish)] : []);

/** A `finish` call judged: its result, or what is wrong with it. */
export type FinishVerdict = { ok: true; result: RunResult } | { ok: false; message: string };

/** Judges a `finish` call's input. */
export type FinishChecker = (input: Record<string, unknown>) => Promise<FinishVerdict>;

/**
 * Checks a `finish` call: a valid one is the run's result; an invalid one
 * gets a message naming what is wrong, for the model to call it again. The
 * client's `result_schema` is checked in a worker bounded in time and memory
 * (see `checkUserSchema`), its patterns in linear time.
 */
export function createFinishChecker(
  { result_schema: resultSchema }: FinishOptions,
  { signal }: { signal?: AbortSignal | undefined } = {},
): FinishChecker {
  const input = z.object({
    summary: z.string().trim().min(1, "must be a non-empty string"),
    confidence: z.number().min(0).max(1).optional(),
    result: resultSchema ? z.unknown().refine((v) => v !== undefined, "is required") : z.unknown().optional(),
  });
  return async (raw) => {
    const parsed = input.safeParse(raw);
    const problems = parsed.success ? [] : parsed.error.issues.map((i) => ({ path: i.path, message: i.message }));
    if (resultSchema && raw.result !== undefined) {
      // Stopped with its run, the check is an answer too: the loop then ends the run as its signal says.
      const found = await checkUserSchema(resultSchema, raw.result, { signal }).catch((err: unknown) => {
        if (signal?.aborted) return [{ path: [], message: "was not checked: the run was stopped" }];
        throw err;
      });
      for (const { path, message } of found) problems.push({ path: ["result", ...path], message });
    }
    if (parsed.success && problems.length === 0)
      return {
        ok: true,
        result: {
          summary: parsed.data.summary,
          confidence: parsed.data.confidence ?? null,
          result: parsed.data.result ?? null,
        },
      };
    const listed = problems.map((p) => `${p.path.length > 0 ? p.path.join(".") : "input"}: ${p.message}`).join("; ");
    return { ok: false, message: `finish was not accepted: ${listed}. Call finish again with valid input.` };
  };
}

/** The results a `finish` turn leaves, in the step's order: its call answered, each other call not executed. */
export function finishResults({ call, calls }: { call: ToolCallBlock; calls: readonly ToolCallBlock[] }): NewMessage[] {
  return calls.map((c) =>
    c === call
      ? {
          role: "tool",
          content: [{ type: "tool_result", tool_call_id: c.id, name: c.name, content: "Finished.", is_error: false }],
        }
      : errorResultFor(c, "tool call was not executed: the run finished"),
  );
}
