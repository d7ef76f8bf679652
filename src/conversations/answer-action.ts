import { errorResultFor } from "../core/history.js";
import type { NewMessage } from "../core/messages.js";
import { AppError, notFound } from "../errors.js";
import type { RunManager } from "../runs/run-manager.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import { clipToolResult } from "../tools/clip-tool-result.js";
import { checkActionAnswer, type ApprovalAnswer, type OutputAnswer } from "./check-action-answer.js";
import { checkSameRequest, hashOfRequest } from "./request-hash.js";

export interface AnswerActionInput {
  /** Whose conversation the run's must be. */
  tenant: string;
  conversationId: string;
  runId: string;
  approvals: ApprovalAnswer[];
  toolOutputs: OutputAnswer[];
  /** Who answered, as the application names them; kept for audit. */
  actor?: string | undefined;
  idempotencyKey?: string | undefined;
}

/** The run answered, and where what the answer caused begins. */
export interface AnsweredRun {
  run: RunRow;
  /** The run's last event before the answer's. */
  afterEventSeq: number;
  /** The `seq` of the answer's first message. */
  firstMessageSeq: number;
  replayed: boolean;
}

const DECLINED = {
  head: "the user declined this call",
  none: " (no reason given)",
  tail: ". It was not executed. Do not retry the same call; take another approach or ask the user.",
};

export const declinedResult = (reason: string | undefined) =>
  `${DECLINED.head}${reason ? `: ${reason}` : DECLINED.none}${DECLINED.tail}`;

/** The reason of a denial's result, as `declinedResult` wrote it ("" for none); undefined for any other result. */
export function reasonOfDenial(result: string): string | undefined {
  if (!result.startsWith(DECLINED.head) || !result.endsWith(DECLINED.tail)) return undefined;
  const middle = result.slice(DECLINED.head.length, -DECLINED.tail.length);
  return middle === DECLINED.none ? "" : middle.startsWith(": ") ? middle.slice(2) : undefined;
}

/**
 * Answers a paused run: every pending call at once. In one transaction, under
 * the run's lock: denials and client outputs are saved as the calls' results,
 * the decisions are recorded (an event and an audit row), and the run is
 * running again under this process's lease; then it goes on here, running
 * the approved calls first. Two answers at once: one wins, the other finds
 * the run no longer waiting (409). Nothing changes on a bad answer.
 */
export async function answerAction(
  { services, runs }: { services: Services; runs: RunManager },
  input: AnswerActionInput,
): Promise<AnsweredRun> {
  const { store, config, signals } = services;
  const found = await store.runs.getOfTenant(input.tenant, input.runId);
  if (!found || found.conversationId !== input.conversationId) throw notFound("run", input.runId);
  const requestHash = hashOfRequest({
    approvals: input.approvals,
    tool_outputs: input.toolOutputs,
    actor: input.actor ?? null,
  });
  const replay = async () => {
    const earlier = input.idempotencyKey
      ? await store.actions.byIdempotencyKey(found.id, input.idempotencyKey)
      : undefined;
    if (!earlier) return undefined;
    checkSameRequest(earlier.requestHash, requestHash, { run_id: found.id });
    const run = (await store.runs.get(found.id)) ?? found;
    return { run, afterEventSeq: earlier.afterEventSeq, firstMessageSeq: earlier.firstMessageSeq, replayed: true };
  };
  const earlier = await replay();
  if (earlier) return earlier;
  await carryToChildren({ services, runs }, found, input);

  let answered: Awaited<ReturnType<RunManager["answer"]>>;
  try {
    answered = await runs.answer(found.id, {
      actor: input.actor ?? null,
      approvals: input.approvals,
      toolOutputs: input.toolOutputs,
      idempotencyKey: input.idempotencyKey ?? null,
      requestHash,
      resultsOf: (waiting) => resultsOf(waiting, input, config.tools.resultMaxChars),
    });
  } catch (err) {
    // The same key sent twice at once: the one that got in is the answer to both.
    if (err instanceof AppError && err.code === "run_not_waiting") {
      const same = await replay();
      if (same) return same;
      const now = await store.runs.get(found.id);
      // Deleted with its conversation meanwhile: as unknown as any other run.
      if (!now) throw notFound("run", input.runId);
      err.details.status = now.status;
    }
    throw err;
  }
  signals.notify(found.id);
  if (answered === "expired") {
    services.telemetry.runEnded({ status: "incomplete", stopReason: "action_expired", request: found.request });
    await runs.startQueued(found.conversationId);
    throw new AppError(
      "run_not_waiting",
      `run ${found.id} is no longer waiting: no answer came before its deadline, so its calls were given up`,
      {
        run_id: found.id,
        status: "incomplete",
        stop_reason: "action_expired",
      },
    );
  }
  runs.start({
    kind: "answered",
    run: answered.run,
    position: answered.position,
    approvedCalls: answered.approvedCalls,
  });
  return {
    run: answered.run,
    afterEventSeq: answered.afterEventSeq,
    firstMessageSeq: answered.firstMessageSeq,
    replayed: false,
  };
}

/**
 * The calls a child run waits on, answered on its parent: the answer goes
 * to each child first (and on to its own children), then the parent's call
 * of the child runs again and waits for the child's end. A child that no
 * longer waits (ended, or answered before a crash stopped this) is left as
 * it stands: the parent's call finds it so.
 */
async function carryToChildren(
  deps: { services: Services; runs: RunManager },
  run: RunRow,
  input: AnswerActionInput,
): Promise<void> {
  const pending = run.status === "requires_action" ? (run.requiredAction?.tool_calls ?? []) : [];
  const children = new Map(pending.flatMap((p) => (p.via ? [[p.via.run_id, p.via.conversation_id] as const] : [])));
  if (children.size === 0) return;
  checkActionAnswer(pending, { approvals: input.approvals, outputs: input.toolOutputs });
  for (const [runId, conversationId] of children) {
    const ids = new Set(pending.filter((p) => p.via?.run_id === runId).map((p) => p.tool_call_id));
    try {
      await answerAction(deps, {
        tenant: input.tenant,
        conversationId,
        runId,
        approvals: input.approvals.filter((a) => ids.has(a.tool_call_id)),
        toolOutputs: input.toolOutputs.filter((o) => ids.has(o.tool_call_id)),
        actor: input.actor,
      });
    } catch (err) {
      if (!(err instanceof AppError) || !["run_not_waiting", "not_found"].includes(err.code)) throw err;
    }
  }
}

/** The answer checked against the run's pending calls, and their results: denials and outputs, in the model's order. */
function resultsOf(waiting: RunRow, input: AnswerActionInput, maxResultChars: number): NewMessage[] {
  const pending = waiting.requiredAction?.tool_calls ?? [];
  checkActionAnswer(pending, { approvals: input.approvals, outputs: input.toolOutputs });
  const approvals = new Map(input.approvals.map((a) => [a.tool_call_id, a]));
  const outputs = new Map(input.toolOutputs.map((o) => [o.tool_call_id, o]));
  // In the model's order; approved calls get theirs when they have run, and a child's calls are the child's (its answer goes there).
  return pending.flatMap((call): NewMessage[] => {
    if (call.via) return [];
    const output = outputs.get(call.tool_call_id);
    if (output) {
      return [
        {
          role: "tool",
          content: [
            {
              type: "tool_result",
              tool_call_id: call.tool_call_id,
              name: call.name,
              content: clipToolResult(output.output, { maxChars: maxResultChars }),
              is_error: output.is_error,
            },
          ],
        },
      ];
    }
    const approval = approvals.get(call.tool_call_id)!;
    return approval.approve
      ? []
      : [
          errorResultFor(
            { type: "tool_call", id: call.tool_call_id, name: call.name, input: call.input },
            declinedResult(approval.reason),
          ),
        ];
  });
}
