import type { AgentCard, Message, SendMessageRequest, StreamResponse, Task } from "@a2a-js/sdk";
import {
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import { answerAction } from "../conversations/answer-action.js";
import { AppError } from "../errors.js";
import type { ConversationService } from "../conversations/conversation-service.js";
import { admit, sendMessage } from "../conversations/send-message.js";
import { cancelRun } from "../runs/cancel-run.js";
import type { RunManager } from "../runs/run-manager.js";
import { waitForRunEnd } from "../runs/wait-for-run-end.js";
import type { Services } from "../services.js";
import type { AgentWithVersion } from "../store/agent-repository.js";
import { isOverRun, type RunRow } from "../store/schema.js";
import { guarded, guardedStream } from "./a2a-errors.js";
import { taskOf } from "./present-task.js";
import { readA2AMessage, type ReadMessage } from "./read-a2a-message.js";
import { taskEvent, taskUpdates } from "./task-updates.js";

export interface A2ADeps {
  services: Services;
  runs: RunManager;
  conversations: ConversationService;
}

export interface AgentTaskOptions {
  tenant: string;
  agent: AgentWithVersion;
  card: AgentCard;
  /** Aborts when the caller leaves or the server stops: a wait or a stream then ends, the run goes on. */
  signal: AbortSignal;
  /** Called once a message's run started, or it was refused (the intake: runs already going may call their models again). */
  onTaken?: () => void;
  /** Told when a new run is refused because the server sheds load: the route answers that `503` itself. */
  onShed?: ((err: AppError) => void) | undefined;
}

/** A task set going: its run, and the last of its events before this message's. */
interface Started {
  run: RunRow;
  after: number;
}

/**
 * One agent of one tenant as an A2A server, on loopd's own records: a task
 * is a run (same id), its context the conversation (same id), so tasks
 * live in the database and outlast the process. The SDK's JSON-RPC
 * transports (1.0, and 0.3 through its compat layer) call this.
 */
export function createAgentTaskHandler(
  deps: A2ADeps,
  { tenant, agent, card, signal, onTaken, onShed }: AgentTaskOptions,
) {
  const { services, runs, conversations } = deps;
  const { store, log } = services;

  /** `err`, told to `onShed` when it refuses a new run because the server sheds load (the route answers that). */
  const shed = (err: unknown) => {
    if (err instanceof AppError && err.code === "unavailable") onShed?.(err);
    return err;
  };

  /** A run of this tenant's conversations with this agent; any other is unknown. */
  const ownRun = async (taskId: string) => {
    if (taskId.trim() === "") throw new RequestMalformedError("params.id must name a task");
    const run = await store.runs.getOfTenant(tenant, taskId);
    const conversation = run && (await store.conversations.get(tenant, run.conversationId));
    if (!run || conversation?.agentName !== agent.name) throw new TaskNotFoundError(`task ${taskId} does not exist`);
    return run;
  };

  const taskNow = async (run: RunRow, historyLength?: number): Promise<Task> => {
    const now = (await store.runs.get(run.id)) ?? run;
    const messages = await store.messages.ofRun({
      conversationId: now.conversationId,
      runId: now.id,
      firstSeq: now.firstSeq,
    });
    return taskOf(now, messages, historyLength === undefined ? {} : { historyLength });
  };

  /** The caller's next message in a context whose task waits for an approval: it answers every call that waits. */
  const answerPause = async (paused: RunRow, read: ReadMessage, taskId: string): Promise<Started> => {
    if (taskId !== "" && taskId !== paused.id)
      throw new RequestMalformedError(
        `task ${paused.id} is the one waiting in context ${paused.conversationId}, not ${taskId}`,
      );
    const calls = paused.requiredAction?.tool_calls ?? [];
    if (calls.some((c) => c.action === "submit_output"))
      throw new UnsupportedOperationError(
        `task ${paused.id} waits for a client tool's output, which only POST /conversations/${paused.conversationId}/runs/${paused.id}/actions takes`,
      );
    if (!read.approval)
      throw new RequestMalformedError(
        `task ${paused.id} waits for an approval: answer with a data part {"approve": true|false, "reason"?} or the text "approve" or "deny"`,
      );
    const { approve, reason } = read.approval;
    const answered = await answerAction(
      { services, runs },
      {
        tenant,
        conversationId: paused.conversationId,
        runId: paused.id,
        approvals: calls.map((c) => ({ tool_call_id: c.tool_call_id, approve, reason })),
        toolOutputs: [],
        actor: "a2a",
      },
    );
    return { run: answered.run, after: answered.afterEventSeq };
  };

  /** A message: a new task in a new context, the next task of a context, or the answer to its paused one. */
  const start = (params: SendMessageRequest): Promise<Started> => startTask(params).finally(onTaken);

  const startTask = async ({ message }: SendMessageRequest): Promise<Started> => {
    const read = readA2AMessage(message);
    const { contextId, taskId } = message as Message;
    let conversationId = contextId !== "" ? contextId : taskId !== "" ? (await ownRun(taskId)).conversationId : null;
    if (conversationId === null) {
      // Refused before its context is made: a server shedding load saves nothing.
      try {
        admit(services);
      } catch (err) {
        throw shed(err);
      }
      conversationId = (await conversations.create(tenant, { agent: agent.name })).id;
    } else {
      const conversation = await store.conversations.get(tenant, conversationId);
      if (conversation?.agentName !== agent.name)
        throw new RequestMalformedError(
          `context ${conversationId} is not one of agent ${agent.name}'s: leave contextId out to start a new one`,
        );
      const active = conversation.activeRunId ? await store.runs.get(conversation.activeRunId) : undefined;
      if (active?.status === "requires_action") return answerPause(active, read, taskId);
      if (taskId !== "") {
        const run = await ownRun(taskId);
        throw new UnsupportedOperationError(
          `task ${taskId} is ${run.status} and takes no message: send one without taskId in context ${conversationId} for the next task`,
        );
      }
    }
    const { run } = await sendMessage(
      { services, runs },
      { tenant, conversationId, content: read.text, textField: "params.message.parts" },
    ).catch((err: unknown) => {
      throw shed(err);
    });
    return { run, after: 0 };
  };

  async function* stream(started: Started): AsyncGenerator<StreamResponse> {
    yield taskEvent(await taskNow(started.run));
    yield* taskUpdates(services, { run: started.run, after: started.after, signal });
  }

  async function* resubscribe(taskId: string): AsyncGenerator<StreamResponse> {
    const run = await ownRun(taskId);
    // The log's end first, then the run: whatever happens after the read is in the events that follow.
    const after = await store.events.lastSeq(run.id);
    const task = await taskNow(run);
    yield taskEvent(task);
    const now = (await store.runs.get(run.id)) ?? run;
    if (isOverRun(now) || now.status === "requires_action") return;
    yield* taskUpdates(services, { run: now, after, signal });
  }

  const handler: A2ARequestHandler = {
    getAgentCard: async () => card,
    getAuthenticatedExtendedAgentCard: async () => {
      throw new ExtendedAgentCardNotConfiguredError("loopd's agents have no extended card");
    },
    sendMessage: (params) =>
      guarded(log, async () => {
        const started = await start(params);
        if (params.configuration?.returnImmediately) return taskNow(started.run);
        const ended = await waitForRunEnd({ services, runs, runId: started.run.id, signal });
        return taskNow(ended ?? started.run, params.configuration?.historyLength);
      }),
    sendMessageStream: (params) =>
      guardedStream(
        log,
        (async function* () {
          yield* stream(await start(params));
        })(),
      ),
    getTask: (params) => guarded(log, async () => taskNow(await ownRun(params.id), params.historyLength)),
    cancelTask: (params) =>
      guarded(log, async () => {
        const run = await ownRun(params.id);
        if (isOverRun(run)) throw new TaskNotCancelableError(`task ${run.id} already ended (${run.status})`);
        return taskNow(await cancelRun({ services, runs, run }));
      }),
    resubscribe: (params) => guardedStream(log, resubscribe(params.id)),
    listTasks: async () => {
      throw new UnsupportedOperationError("tasks are listed with GET /conversations/:id/runs");
    },
    createTaskPushNotificationConfig: unsupportedPush,
    getTaskPushNotificationConfig: unsupportedPush,
    listTaskPushNotificationConfigs: unsupportedPush,
    deleteTaskPushNotificationConfig: unsupportedPush,
  };
  return handler;
}

async function unsupportedPush(): Promise<never> {
  throw new PushNotificationNotSupportedError(
    "loopd sends webhooks (a conversation's `webhook`), not A2A push notifications",
  );
}
