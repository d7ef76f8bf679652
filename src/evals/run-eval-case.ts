import type { FastifyInstance } from "fastify";
import type { UserInputBlock } from "../core/attachment-input.js";
import type { Message, NewMessage, UserBlock } from "../core/messages.js";
import { hasInlineAttachments } from "./case-attachments.js";
import type { Store } from "../store/store.js";
import type { EvalCase } from "./eval-case.js";
import type { EvalUsage } from "./case-result.js";
import { RECORDED_MISS, type RecordedLookup } from "./recorded-tools.js";
import type { EvalOutcome } from "./score-eval-case.js";

/** A run of a case: what it did, or why it could not be made. */
export type CaseRun =
  | {
      ran: true;
      conversation_id: string;
      run_id: string;
      model: string;
      outcome: EvalOutcome;
      usage: EvalUsage;
      latency_ms: number;
    }
  | { ran: false; reason: string };

interface RunAnswer {
  run: {
    id: string;
    model: string;
    status: string;
    stop_reason: string | null;
    steps: number;
    usage: EvalUsage;
    error: { code: string; message: string } | null;
    result?: { result: unknown } | null;
    required_action?: {
      tool_calls: {
        tool_call_id: string;
        name: string;
        input: Record<string, unknown>;
        action: "approve" | "submit_output";
      }[];
    };
  };
  messages: Message[];
  output_text: string;
}

/**
 * One case through loopd's own API, in the app the runner built over its
 * throw-away database: the conversation is created with the case's settings
 * (checked by the route, as any client's), the history before the run is
 * written as it was, and the input is sent, so the run is made by the real
 * loop. A run that waits is answered from the recordings: each call to
 * approve is approved (the stand-in tools answer it), each client tool's
 * output is its recorded result, or the miss.
 */
export async function runEvalCase({
  app,
  store,
  evalCase,
  settings,
  lookup,
  maxStepsLimit,
  onConversation,
  attach,
  now = () => performance.now(),
}: {
  app: FastifyInstance;
  store: Pick<Store, "messages">;
  evalCase: EvalCase;
  /** The conversation's settings for this case (the case's, with the command's overrides). */
  settings: Record<string, unknown>;
  lookup: RecordedLookup;
  /** The most steps a run may be given (config `MAX_STEPS_LIMIT`). */
  maxStepsLimit: number;
  /** Told the conversation's id before its run starts (the recorded tools answer by it). */
  onConversation: (id: string) => void;
  /** Stores a history message's images and documents for the conversation (checked as a message's are); its blocks as saved. */
  attach: (conversationId: string, blocks: UserInputBlock[]) => Promise<UserBlock[]>;
  now?: () => number;
}): Promise<CaseRun> {
  const created = await app.inject({ method: "POST", url: "/conversations", payload: settings });
  if (created.statusCode !== 201)
    return { ran: false, reason: `the case's conversation was refused: ${messageOf(created.json())}` };
  const conversationId = (created.json() as { id: string }).id;
  onConversation(conversationId);
  const history: NewMessage[] = [];
  // Refused turns are written too, marked as they were: a summary's range is in the history's seqs, which they are part of.
  for (const m of evalCase.history) {
    // Images and documents come in the case as a client sends them: stored for this conversation, as a message's are.
    const content =
      m.role === "user" && hasInlineAttachments(m.content)
        ? await attach(conversationId, m.content as UserInputBlock[])
        : m.content;
    history.push({
      role: m.role,
      content,
      ...(m.kind && { kind: m.kind }),
      ...(m.summarizes && { summarizes: m.summarizes }),
      ...(m.excluded && { excluded: m.excluded }),
    } as NewMessage);
  }
  await store.messages.append({ conversationId, runId: null, items: history });

  const startedAt = now();
  let res = await app.inject({
    method: "POST",
    url: `/conversations/${conversationId}/messages`,
    payload: { content: evalCase.input, ...runLimits(evalCase, maxStepsLimit) },
  });
  const messages: Message[] = [];
  for (;;) {
    if (res.statusCode !== 200)
      return { ran: false, reason: `the case's message was refused: ${messageOf(res.json())}` };
    const answer = res.json() as RunAnswer;
    messages.push(...answer.messages);
    const pending = answer.run.status === "requires_action" ? (answer.run.required_action?.tool_calls ?? []) : [];
    if (pending.length === 0) {
      const { run } = answer;
      return {
        ran: true,
        conversation_id: conversationId,
        run_id: run.id,
        model: run.model,
        latency_ms: Math.round(now() - startedAt),
        usage: run.usage,
        outcome: {
          status: run.status,
          stop_reason: run.stop_reason,
          error: run.error,
          steps: run.steps,
          cost_usd: run.usage.cost_usd,
          tool_calls: messages.flatMap((m) =>
            m.role === "assistant" ? m.content.flatMap((b) => (b.type === "tool_call" ? [b.name] : [])) : [],
          ),
          final_text: answer.output_text,
          result: run.result ?? null,
        },
      };
    }
    const outputs = pending.filter((c) => c.action === "submit_output").map((c) => ({ call: c, found: lookup(c) }));
    res = await app.inject({
      method: "POST",
      url: `/conversations/${conversationId}/runs/${answer.run.id}/actions`,
      payload: {
        approvals: pending
          .filter((c) => c.action === "approve")
          .map((c) => ({ tool_call_id: c.tool_call_id, approve: true })),
        tool_outputs: outputs.map(({ call, found }) => ({
          tool_call_id: call.tool_call_id,
          output: found?.content ?? RECORDED_MISS,
          is_error: found?.is_error ?? true,
        })),
      },
    });
  }
}

/** Room for one step past the case's limit, so that a run over it is seen to be (the server's limit caps it). */
const runLimits = ({ expect }: EvalCase, limit: number) =>
  expect.max_steps === undefined ? {} : { max_steps: Math.min(expect.max_steps + 1, limit) };

const messageOf = (body: unknown) => (body as { error?: { message?: string } }).error?.message ?? JSON.stringify(body);
