import { setTimeout as sleep } from "node:timers/promises";
import { textOf } from "../core/messages.js";
import { RunInterruption } from "../core/interruptions.js";
import type { PendingToolCall } from "../core/run-outcome.js";
import { AppError } from "../errors.js";
import type { ConversationService } from "../conversations/conversation-service.js";
import { sendMessage } from "../conversations/send-message.js";
import { cancelRun } from "../runs/cancel-run.js";
import type { RunManager } from "../runs/run-manager.js";
import { waitForRunEnd } from "../runs/wait-for-run-end.js";
import type { Services } from "../services.js";
import { historyOf } from "../store/message-repository.js";
import type { RunRow } from "../store/schema.js";
import { uniqueViolation } from "../store/unique-violation.js";
import { agentToolName, type AgentCallEnd, type AgentCaller } from "../tools/agent-tools.js";

/** A child run waiting out an outage is looked at again this often (the calling run's clock bounds the wait). */
const OUTAGE_LOOK_MS = 1_000;

/**
 * Runs agents as other agents' tools. A call starts a run in a child
 * conversation made from the agent's latest version, for the caller's
 * tenant, and waits for its end. Every step is found again when the call
 * runs again (a crash, a pause answered): the child conversation by the call
 * (one per call, by a unique index), its run by an idempotency key made of
 * the call's id, so a call never runs a child twice.
 */
export function createAgentCaller({
  services,
  runs,
  conversations,
}: {
  services: Services;
  runs: RunManager;
  conversations: ConversationService;
}): AgentCaller {
  const { store, config } = services;
  const refused = (content: string): AgentCallEnd => ({ type: "ended", content, isError: true, usage: null });

  return {
    async describe(tenant, names) {
      const found = await Promise.all(names.map((name) => store.agents.get(tenant, name)));
      return new Map(found.flatMap((agent) => (agent ? [[agent.name, agent.at.description] as const] : [])));
    },

    async call(request) {
      const { tenant, conversationId, runId, toolCallId, agent, message, signal } = request;
      let child = await store.conversations.childOf(tenant, { runId, toolCallId });
      if (!child) {
        const depth = request.depth + 1;
        const max = config.runs.maxAgentDepth;
        if (depth > max)
          return refused(
            `not run: agents may call agents at most ${max} deep (MAX_AGENT_DEPTH), and this call would be depth ${depth}. Do this part yourself, or answer with what you have.`,
          );
        try {
          await conversations.create(
            tenant,
            { agent },
            { parent: { conversation_id: conversationId, run_id: runId, tool_call_id: toolCallId, depth } },
          );
        } catch (err) {
          if (err instanceof AppError) return refused(`not run: agent ${agent} cannot be started: ${err.message}`);
          // The same call started it meanwhile (run twice at once): that one is the child.
          if (uniqueViolation(err) !== "conversations_parent_call_key") throw err;
        }
        child = await store.conversations.childOf(tenant, { runId, toolCallId });
        if (!child) return refused("not run: the agent's conversation was deleted as it started");
      }
      let run: RunRow;
      try {
        // Its first run; the same one when the call runs again (the key is the call's).
        ({ run } = await sendMessage(
          { services, runs },
          { tenant, conversationId: child.id, content: message, idempotencyKey: `agent-call:${toolCallId}` },
        ));
      } catch (err) {
        if (err instanceof AppError) return refused(`not run: agent ${agent} could not start: ${err.message}`);
        throw err;
      }
      await store.runs.addChild(runId, { conversation_id: child.id, run_id: run.id, tool_call_id: toolCallId });

      const ended = await endOf(run.id, signal);
      if (signal.aborted) {
        // Cancelled, superseded or out of time: the child stops too. Interrupted (shutdown, lease lost): it goes on, and the call finds it again.
        if (!(signal.reason instanceof RunInterruption))
          void cancelRun({ services, runs, run: ended ?? run }).catch(() => {});
        return refused("cancelled");
      }
      if (!ended) return refused(`agent ${agent}'s conversation ${child.id} was deleted before it answered`);
      const ref = { conversation_id: child.id, run_id: ended.id };
      if (ended.status === "requires_action") {
        const via = { ...ref, tool_call_id: toolCallId, name: agentToolName(agent) };
        return {
          type: "waiting",
          pending: (ended.requiredAction?.tool_calls ?? []).map((p): PendingToolCall => ({ ...p, via })),
        };
      }
      // Added to the calling run's usage with the result; recorded first, so `/usage` never counts it twice.
      await store.runs.foldChild(runId, toolCallId, ended.usage);
      const rows = await store.messages.ofRun({ conversationId: child.id, runId: ended.id, firstSeq: ended.firstSeq });
      const answer = historyOf(rows).findLast((m) => m.role === "assistant");
      return {
        type: "ended",
        isError: ended.status !== "completed",
        usage: ended.usage,
        content: JSON.stringify({
          ...ref,
          status: ended.status,
          ...(ended.status !== "completed" && { stop_reason: ended.stopReason }),
          answer: answer ? textOf(answer) : "",
          ...(ended.result && { result: ended.result.result, summary: ended.result.summary }),
          ...(ended.error && { error: ended.error }),
          ...(ended.budgetExceeded && { budget_exceeded: ended.budgetExceeded }),
        }),
      };
    },
  };

  /** The child run once it ends or pauses (a run waiting out an outage is waited for too); undefined when it is gone. */
  async function endOf(runId: string, signal: AbortSignal): Promise<RunRow | undefined> {
    for (;;) {
      const run = await waitForRunEnd({ services, runs, runId, signal });
      if (run?.status !== "waiting" || signal.aborted) return run;
      await sleep(OUTAGE_LOOK_MS, undefined, { signal }).catch(() => {});
    }
  }
}
