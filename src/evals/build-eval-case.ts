import type { AssistantBlock } from "../core/messages.js";
import type { presentConversation } from "../conversations/present.js";
import { presentMessage } from "../conversations/present.js";
import { AppError } from "../errors.js";
import type { Redactor } from "../util/redact.js";
import { traceSpans } from "../runs/trace/read-trace.js";
import type { ModelSetup } from "../runs/trace/run-tracer.js";
import type { RunRow } from "../store/schema.js";
import type { Store } from "../store/store.js";
import type { EvalCase, Expectations, RecordedResult } from "./eval-case.js";
import { withInlineAttachments } from "./case-attachments.js";

/**
 * An eval case made from a run's trace: the settings its model calls were
 * made with (the first `model.setup`: provider, model, system prompt,
 * context; the tools and client tools are the conversation's), the history
 * before the run, the run's user message, every tool result it got, and
 * expectations filled from what it did, for the user to edit: the tools it
 * called in order, its final text, its finish result's schema, its steps, and
 * its cost with a quarter more as headroom (the same answers cost a little
 * more or less as the tool call ids a provider makes up differ in length).
 */
export async function buildEvalCase({
  store,
  run,
  conversation,
  redactor,
  tenant,
}: {
  store: Pick<Store, "traces" | "messages" | "attachments">;
  run: RunRow;
  conversation: ReturnType<typeof presentConversation>;
  redactor: Redactor;
  /** The run's tenant: its attachments are read in it. */
  tenant: string;
}): Promise<EvalCase> {
  if (run.firstSeq === null)
    throw new AppError("invalid_request", `run ${run.id} has not started: it has no message to make a case of`, {
      run_id: run.id,
    });
  const before = run.firstSeq - 1;
  const history =
    before > 0 ? await store.messages.page({ conversationId: run.conversationId, afterSeq: 0, limit: before }) : [];
  const [first] = await store.messages.bySeqs(run.conversationId, [run.firstSeq]);
  const shown = history.map(presentMessage);
  const input = first ? presentMessage(first) : null;
  const data = await store.attachments.dataOf(tenant, input ? [...shown, input] : shown);

  let setup: ModelSetup | undefined;
  const toolCalls: string[] = [];
  const recorded: RecordedResult[] = [];
  let finalText = "";
  let traced = false;
  for await (const span of traceSpans({ store, run, redactor })) {
    if (span.type === "model.setup") setup ??= span as unknown as ModelSetup;
    if (span.type === "model.call") traced = true;
    // Only answered attempts: a failed one (retried, or fallen over) proposed nothing.
    if (span.type === "model.call" && span.outcome !== "failed") {
      const content = (span.response as { content: AssistantBlock[] }).content;
      toolCalls.push(...content.flatMap((b) => (b.type === "tool_call" ? [b.name] : [])));
      finalText = content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
    }
    if (span.type === "tool.call") {
      recorded.push({
        name: span.name as string,
        input: (span.input ?? {}) as Record<string, unknown>,
        content: (span.output as string | null) ?? "",
        is_error: span.is_error as boolean,
      });
    }
  }
  if (!traced && run.steps > 0) {
    throw new AppError(
      "invalid_request",
      `run ${run.id} has no trace (it ran with TRACE=off): an eval case is made of a run's trace`,
      { run_id: run.id },
    );
  }

  const resultSchema = run.request.finish ? (run.request.finish.result_schema ?? {}) : undefined;
  const cost = run.usage.cost_usd;
  const expect: Expectations = {
    tool_calls: toolCalls,
    ...(finalText.trim() !== "" && { final_text: { contains: finalText } }),
    ...(resultSchema && { finish_result: resultSchema }),
    max_steps: Math.max(1, run.steps),
    ...(typeof cost === "number" && { max_cost_usd: withHeadroom(cost) }),
  };
  return {
    name: `${conversation.title ?? conversation.id} — ${run.id}`,
    conversation: {
      system: setup ? setup.system : conversation.system,
      provider: (setup?.provider ?? run.provider) as EvalCase["conversation"]["provider"],
      model: setup?.model ?? run.model,
      tools: conversation.tools,
      context: (setup?.context ?? conversation.context) as unknown as Record<string, unknown>,
      client_tools: conversation.client_tools as unknown as Record<string, unknown>[] | null,
    },
    agent: run.request.agent ?? null,
    // Secrets the trace hides are hidden here too: a case is a file to keep and share.
    history: shown.map((m) => redactor.value(withInlineAttachments(m, data))),
    input: redactor.value(input ? withInlineAttachments(input, data).content : []) as EvalCase["input"],
    recorded,
    expect,
  };
}

/** A quarter over `usd`, rounded up to a millionth of a dollar. */
const withHeadroom = (usd: number) => Math.ceil(usd * 1.25 * 1e6) / 1e6;
