import { errorResultFor } from "../core/history.js";
import type { NewMessage } from "../core/messages.js";
import { redactorOf, type Redactor } from "../util/redact.js";
import { AppError, notFound } from "../errors.js";
import type { RunManager } from "../runs/run-manager.js";
import type { ActionAnswered } from "../runs/run-events.js";
import type { Services } from "../services.js";
import type { RunRow } from "../store/schema.js";
import type { Repositories } from "../store/store.js";
import { clipToolResult } from "../tools/clip-tool-result.js";
import { checkActionAnswer, type ApprovalAnswer, type OutputAnswer } from "./check-action-answer.js";
import { checkSameRequest, hashOfRequest } from "./request-hash.js";
import { createRunAppender, positionOf } from "../runs/run-numbering.js";
import { closeWaitingRun, EXPIRED } from "../runs/close-waiting-run.js";

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
  const { store, config, instanceId, signals } = services;
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

  let answered: Awaited<ReturnType<typeof saveAnswer>> | "expired";
  try {
    answered = await store.transaction(async (tx) => {
      const waiting = await tx.runs.lockWaiting(found.id);
      if (!waiting) {
        throw new AppError("run_not_waiting", `run ${found.id} is not waiting for an answer`, { run_id: found.id });
      }
      // Past its deadline, the calls were given up, whether or not the sweeper has been round yet.
      if (await tx.runs.lockWaiting(found.id, { overdue: true })) {
        await closeWaitingRun(tx, waiting, EXPIRED);
        return "expired" as const;
      }
      return saveAnswer(tx, {
        waiting,
        input,
        requestHash,
        owner: instanceId,
        leaseMs: config.runs.leaseMs,
        maxResultChars: config.tools.resultMaxChars,
        trace: config.trace.enabled,
        redactor: redactorOf(config),
      });
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
    services.telemetry.runEnded({ status: "incomplete", stopReason: EXPIRED.stopReason });
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

async function saveAnswer(
  tx: Repositories,
  {
    waiting,
    input,
    requestHash,
    owner,
    leaseMs,
    maxResultChars,
    trace,
    redactor,
  }: {
    waiting: RunRow;
    input: AnswerActionInput;
    requestHash: string;
    owner: string;
    leaseMs: number;
    maxResultChars: number;
    trace: boolean;
    redactor: Redactor;
  },
) {
  const pending = waiting.requiredAction?.tool_calls ?? [];
  checkActionAnswer(pending, { approvals: input.approvals, outputs: input.toolOutputs });
  const approvals = new Map(input.approvals.map((a) => [a.tool_call_id, a]));
  const outputs = new Map(input.toolOutputs.map((o) => [o.tool_call_id, o]));
  // In the model's order; approved calls get theirs when they have run.
  const results = pending.flatMap((call): NewMessage[] => {
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
  const decisions: ActionAnswered = {
    actor: input.actor ?? null,
    approvals: input.approvals.map(({ tool_call_id, approve, reason }) => ({
      tool_call_id,
      approve,
      ...(reason !== undefined && { reason }),
    })),
    tool_outputs: input.toolOutputs.map(({ tool_call_id, is_error }) => ({ tool_call_id, is_error })),
  };
  const appender = createRunAppender(tx, waiting, await positionOf(tx, waiting));
  const afterEventSeq = appender.position.lastSeq;
  await appender.event("run.action_answered", decisions);
  const firstMessageSeq = await appender.toolResults(results, {
    sourceOf: trace ? (result) => (outputs.has(result.tool_call_id) ? "client" : "declined") : undefined,
  });
  // Before the results' spans (each on its message).
  if (trace)
    await tx.traces.append(waiting.id, [{ type: "action.answered", data: redactor.value({ ...decisions }) }], {
      nextMessageSeq: firstMessageSeq,
    });
  const run = await tx.runs.resume(waiting.id, { owner, leaseMs });
  await tx.actions.insert({
    runId: waiting.id,
    actor: decisions.actor,
    answer: { approvals: decisions.approvals, tool_outputs: decisions.tool_outputs },
    idempotencyKey: input.idempotencyKey ?? null,
    requestHash,
    afterEventSeq,
    firstMessageSeq,
  });
  await tx.notify("loopd_run_events", waiting.id);
  return {
    run,
    afterEventSeq,
    firstMessageSeq,
    position: appender.position,
    approvedCalls: input.approvals.filter((a) => a.approve).map((a) => a.tool_call_id),
  };
}
