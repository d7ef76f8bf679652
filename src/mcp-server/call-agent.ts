import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { answerAction } from "../conversations/answer-action.js";
import { sendMessage } from "../conversations/send-message.js";
import { cancelRun } from "../runs/cancel-run.js";
import { AppError } from "../errors.js";
import type { PendingCall, RunRow } from "../store/schema.js";
import { linkedAbort } from "../util/linked-abort.js";
import type { McpServerDeps } from "./mcp-server-deps.js";
import { followToPause } from "./follow-to-pause.js";
import { endedResult, pausedResult, stoppingResult } from "./run-results.js";

/** The longest delay a Node timer takes. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface AgentCall {
  tenant: string;
  agent: string;
  message: string;
  /** Continue this conversation (one started from `agent`); absent: a new one. */
  conversationId?: string | undefined;
  /** The MCP request's: its cancellation cancels the run. */
  signal: AbortSignal;
  /** Called once the run started, or was refused. */
  taken?: (() => void) | undefined;
  /** Set when the client asked for progress: called once the run starts (0) and once per step. */
  progress?: ((p: { progress: number; total: number; message?: string }) => Promise<void>) | undefined;
  /** Set when the client declares elicitation: asks whether to run a call. */
  approve?:
    | ((
        call: PendingCall,
        bound: { run: RunRow; timeoutMs: number; signal: AbortSignal },
      ) => Promise<{ approve: boolean; reason?: string }>)
    | undefined;
}

/**
 * Runs an agent for an MCP client, as `POST /conversations/:id/messages`
 * does (the same service, checks and bounds), then follows the run to its
 * end: one progress notification per step, each pause for approvals asked
 * through elicitation when the client can answer one (else the call ends
 * with the run paused and how to answer it), and the answer as the result.
 */
export async function callAgent(deps: McpServerDeps, call: AgentCall): Promise<CallToolResult> {
  const { services, runs, conversations } = deps;
  const { tenant, agent } = call;
  let conversationId = call.conversationId;
  if (conversationId !== undefined) {
    const conversation = await conversations.get(tenant, conversationId);
    if (conversation.agent?.name !== agent)
      throw new AppError("invalid_request", `conversation ${conversationId} was not started from agent ${agent}`, {
        field: "arguments.conversation_id",
      });
  }
  const release = deps.takeStream(tenant);
  const stop = linkedAbort(call.signal, deps.shutdown);
  try {
    const made = conversationId === undefined ? (await conversations.create(tenant, { agent })).id : null;
    conversationId ??= made!;
    const sent = await sendMessage(
      { services, runs },
      { tenant, conversationId, content: call.message, textField: "arguments.message" },
    )
      .catch(async (err: unknown) => {
        // A run refused (the tenant's cap, a shed, a bad message): the conversation made for it is not left behind, empty.
        if (made) await conversations.delete(tenant, made, runs).catch(() => {});
        throw err;
      })
      .finally(call.taken);
    let run: RunRow = sent.run;
    const total = run.request.max_steps;
    await call.progress?.({ progress: 0, total, message: `run ${run.id} of conversation ${conversationId} started` });
    let after = 0;
    let steps = 0;
    for (;;) {
      run = await followToPause(services, {
        run,
        after,
        signal: stop.signal,
        onSteps: async (done) => {
          if (done <= steps) return;
          steps = done;
          await call.progress?.({ progress: done, total, message: `step ${done} of run ${run.id}` });
        },
      });
      // A stopping server is not a cancel (its sessions closing abort the request too): the run goes on.
      if (deps.shutdown.aborted) return stoppingResult(run);
      if (call.signal.aborted) {
        // The client cancelled the request: the run ends cancelled (the SDK sends no answer to a cancelled request).
        return endedResult(deps, await cancelRun({ services, runs, run }));
      }
      if (run.status !== "requires_action") return await endedResult(deps, run);
      const calls = run.requiredAction?.tool_calls ?? [];
      const approve = call.approve;
      if (!approve || calls.some((c) => c.action !== "approve")) return pausedResult(run);
      const approvals = [];
      // Asked for as long as the pause lasts: past it the run no longer waits.
      const expires = Date.parse(run.requiredAction?.expires_at ?? "");
      // At most what a timer holds: past 2^31 ms, Node fires it at once (an ACTION_TIMEOUT_S of 25 days or more).
      const timeoutMs = Number.isFinite(expires)
        ? Math.min(MAX_TIMER_MS, Math.max(1000, expires - Date.now()))
        : 60_000;
      try {
        for (const pending of calls)
          approvals.push({
            tool_call_id: pending.tool_call_id,
            ...(await approve(pending, { run, timeoutMs, signal: stop.signal })),
          });
      } catch (err) {
        // The question ends when the server stops: the run stays paused, for the next process to take the answer.
        if (deps.shutdown.aborted) return stoppingResult(run);
        if (call.signal.aborted) return endedResult(deps, await cancelRun({ services, runs, run }));
        // No answer came (the client failed or timed out): the run stays paused, to be answered on the route.
        deps.services.log.warn({ err, run_id: run.id }, "an MCP client did not answer an elicitation");
        return pausedResult(run);
      }
      const answered = await answerAction(
        { services, runs },
        { tenant, conversationId, runId: run.id, approvals, toolOutputs: [], actor: "mcp client" },
      );
      run = answered.run;
      after = answered.afterEventSeq;
    }
  } finally {
    stop.dispose();
    release();
  }
}
