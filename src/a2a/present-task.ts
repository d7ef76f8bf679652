import { Role, TaskState, type Artifact, type Message, type Part, type Task, type TaskStatus } from "@a2a-js/sdk";
import { textOf, type NewMessage } from "../core/messages.js";
import type { MessageRow, RunRow, RunStatus } from "../store/schema.js";

/** A stored message as the core reads it (a row's role and content are not tied together in its type). */
export const asMessage = (row: MessageRow) => ({ role: row.role, content: row.content }) as NewMessage;

/** The artifact a task's answer is, in every task (one per task, replaced as a whole). */
export const ANSWER_ARTIFACT_ID = "answer";

export const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});

export const dataPart = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "application/json",
});

/** A message of the agent's, in the task's context. */
export const agentMessage = (run: RunRow, { id, parts }: { id: string; parts: Part[] }): Message => ({
  messageId: id,
  contextId: run.conversationId,
  taskId: run.id,
  role: Role.ROLE_AGENT,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** A run's status as a task's state: paused for an approval is `input-required`; stopped short (a budget, `max_tokens`) is `failed`. */
export function stateOf(status: RunStatus): TaskState {
  switch (status) {
    case "queued":
      return TaskState.TASK_STATE_SUBMITTED;
    case "running":
    case "waiting":
      return TaskState.TASK_STATE_WORKING;
    case "requires_action":
      return TaskState.TASK_STATE_INPUT_REQUIRED;
    case "completed":
      return TaskState.TASK_STATE_COMPLETED;
    case "incomplete":
    case "failed":
      return TaskState.TASK_STATE_FAILED;
    case "cancelled":
      return TaskState.TASK_STATE_CANCELED;
  }
}

/** The run's last assistant text, and what its `finish` call reported. */
function answerOf(run: RunRow, messages: MessageRow[]): Part[] {
  const text = messages
    .filter((m) => m.role === "assistant")
    .map((m) => textOf(asMessage(m)))
    .filter((t) => t !== "")
    .at(-1);
  return [...(text !== undefined ? [textPart(text)] : []), ...(run.result !== null ? [dataPart(run.result)] : [])];
}

/** The answer of a run that ended with one, as the task's artifact. */
export function answerArtifactOf(run: RunRow, messages: MessageRow[]): Artifact | undefined {
  if (run.status !== "completed" && run.status !== "incomplete") return undefined;
  const parts = answerOf(run, messages);
  if (parts.length === 0) return undefined;
  return {
    artifactId: ANSWER_ARTIFACT_ID,
    name: "answer",
    description: "",
    parts,
    metadata: undefined,
    extensions: [],
  };
}

/** What the status says beside the state: the answer, the calls that wait for an approval, or why it stopped. */
function statusMessageOf(run: RunRow, messages: MessageRow[]): Message | undefined {
  const say = (parts: Part[]) => agentMessage(run, { id: `${run.id}-${run.status}`, parts });
  switch (run.status) {
    case "completed": {
      const parts = answerOf(run, messages);
      return parts.length > 0 ? say(parts) : undefined;
    }
    case "requires_action": {
      const calls = run.requiredAction?.tool_calls ?? [];
      const names = calls.map((c) => c.name).join(", ");
      return say([
        textPart(
          `approval needed to call ${names}: answer in this context with a data part {"approve": true} or {"approve": false, "reason": "…"} (or the text "approve" or "deny")`,
        ),
        dataPart({ tool_calls: calls, expires_at: run.requiredAction?.expires_at ?? null }),
      ]);
    }
    case "failed":
      return say([textPart(run.error?.message ?? "the run failed")]);
    case "incomplete":
      return say([textPart(`the run stopped before its answer: ${run.stopReason ?? "incomplete"}`)]);
    default:
      return undefined;
  }
}

export const statusOf = (run: RunRow, messages: MessageRow[]): TaskStatus => ({
  state: stateOf(run.status),
  message: statusMessageOf(run, messages),
  timestamp: (run.completedAt ?? run.pausedAt ?? run.createdAt).toISOString(),
});

/** The user's and the agent's texts of the run, as the task's history (tool calls and results stay loopd's). */
function historyOf(run: RunRow, messages: MessageRow[]): Message[] {
  return messages.flatMap((m) => {
    if (m.role === "tool") return [];
    const text = textOf(asMessage(m));
    if (text === "") return [];
    return [
      {
        ...agentMessage(run, { id: m.id, parts: [textPart(text)] }),
        role: m.role === "user" ? Role.ROLE_USER : Role.ROLE_AGENT,
      },
    ];
  });
}

/** What loopd adds to a task: the run and conversation it is, and how the run stands. */
export const loopdMetadataOf = (run: RunRow) => ({
  loopd: {
    run_id: run.id,
    conversation_id: run.conversationId,
    status: run.status,
    stop_reason: run.stopReason,
    steps: run.steps,
  },
});

/**
 * A run as an A2A task: the task's id is the run's, its context the
 * conversation. `historyLength`: absent, every message; 0, none; n, the last n.
 */
export function taskOf(run: RunRow, messages: MessageRow[], { historyLength }: { historyLength?: number } = {}): Task {
  const history = historyOf(run, messages);
  const artifact = answerArtifactOf(run, messages);
  return {
    id: run.id,
    contextId: run.conversationId,
    status: statusOf(run, messages),
    artifacts: artifact ? [artifact] : [],
    history: historyLength === undefined ? history : historyLength <= 0 ? [] : history.slice(-historyLength),
    metadata: loopdMetadataOf(run),
  };
}
