import { answerAction } from "../../conversations/answer-action.js";
import type { ConversationService } from "../../conversations/conversation-service.js";
import { forkConversation } from "../../conversations/fork-conversation.js";
import { sendMessage } from "../../conversations/send-message.js";
import { AppError } from "../../errors.js";
import type { RunManager } from "../../runs/run-manager.js";
import type { Services } from "../../services.js";
import { newId } from "../../store/ids.js";
import type { RunRow } from "../../store/schema.js";
import { inputOfItems, type ResponseInput } from "../items/input-of-items.js";
import { openAiError } from "../openai-errors.js";
import type { CreateResponseBody } from "./create-response-body.js";
import { clientToolsOf, echoOf, finishOf, toolChoiceOf } from "./response-echo.js";
import type { ResponseEcho } from "./present-response.js";
import { resolveModel, type ModelTarget } from "./resolve-model.js";
import { conversationOfPrevious } from "./previous-response.js";
import { compactionOfInput, writeCompaction } from "./compaction-input.js";
import { historyPrelude } from "./history-prelude.js";
import type { ConversationTools } from "./response-stream.js";

export interface ResponseDeps {
  services: Services;
  conversations: ConversationService;
  runs: RunManager;
}

/** A response as it was made: its stretch of a run, what it echoes; `throwaway` when nothing of it is to be kept (`store: false`). */
export interface CreatedResponse {
  id: string;
  tenant: string;
  createdAt: Date;
  conversationId: string;
  run: RunRow;
  runId: string;
  afterEvent: number;
  fromSeq: number | null;
  previousResponseId: string | null;
  background: boolean;
  echo: ResponseEcho;
  throwaway: boolean;
  /** The conversation's tools as the response began (its stream tells the server's calls from the client's by them). */
  tools: ConversationTools;
}

const answerFirst = () =>
  bad("input", "answer the calls (function_call_output, mcp_approval_response) first, then send the next message");

const bad = (param: string, message: string, openaiCode: string | null = null) =>
  openAiError("invalid_request", message, { param, openaiCode });

/**
 * `POST /v1/responses`: the conversation it goes on in (a new one; the
 * previous response's, or a fork at it when it is not its conversation's
 * latest; the named one), the request's tools as the conversation's client
 * tools, then either an answer to the paused run (function outputs,
 * approvals) or a new run with the user's message. Stored (unless
 * `store: false`, whose conversation is a throw-away one).
 */
export async function createResponse(
  deps: ResponseDeps,
  {
    tenant,
    body,
    kept,
  }: {
    tenant: string;
    body: CreateResponseBody;
    /** WebSocket mode: the conversation that continues a `store: false` response the socket keeps, or `null` (see `kept-responses.ts`). */
    kept?:
      | { conversationOf(id: string, o: { store: boolean }): Promise<{ id: string; forked: boolean } | null> }
      | undefined;
  },
): Promise<CreatedResponse> {
  const { services, conversations } = deps;
  const store = body.store ?? true;
  if (!store && body.background)
    throw bad("background", "background responses must be stored: store: false cannot be background");
  const named = typeof body.conversation === "string" ? body.conversation : (body.conversation?.id ?? null);
  if (named !== null && body.previous_response_id)
    throw bad("conversation", "conversation and previous_response_id cannot be used together");
  // A compaction item stands for what came before it: its summary goes into the history ahead of the run.
  const compaction = await compactionOfInput(services, { tenant, input: body.input ?? [], read: inputOfItems });
  const { input } = compaction;
  // A history after a compaction item is checked later: its errors name the request's own places.
  if (input.history) input.history.params = input.history.params.map(compaction.placeOf);
  const answers = input.toolOutputs.length + input.approvals.length > 0;
  if (answers && compaction.message)
    throw bad("input", "a compaction item goes with a user message, not with answers to calls");
  if (!answers && input.content.length === 0 && !input.history?.items.length)
    throw bad("input", "input holds no user message and no answer to a call");
  if (input.approvals.length > 0 && input.content.length > 0) throw answerFirst();
  const target = await resolveModel(services, { tenant, model: body.model });

  let conversationId: string;
  // One this request makes is as the request asks: nothing to settle.
  let made: Awaited<ReturnType<ConversationService["create"]>> | null = null;
  // A fork this request makes: gone again if the response is refused.
  let forked = false;
  if (body.previous_response_id) {
    const continued =
      (await kept?.conversationOf(body.previous_response_id, { store })) ??
      (await conversationOfPrevious(deps, {
        tenant,
        id: body.previous_response_id,
        fork: !store || undefined,
        throwaway: !store,
      }));
    conversationId = continued.id;
    forked = continued.forked;
  } else if (named !== null) {
    const conversation = await conversations.get(tenant, named).catch((err: unknown) => {
      throw err instanceof AppError && err.code === "not_found"
        ? openAiError("not_found", err.message, { param: "conversation", openaiCode: null })
        : err;
    });
    conversationId = store
      ? conversation.id
      : (await forkConversation(services, tenant, conversation.id, { throwaway: true })).id;
  } else {
    made = await conversations.create(tenant, newConversation(target, body), { throwaway: !store });
    conversationId = made.id;
  }
  const throwaway = !store;
  try {
    // Made marked (in the statement that made it): were this process killed, another would delete it.
    if (throwaway) services.throwaways?.hold(conversationId);
    const conversation = made ?? (await settleConversation(deps, { tenant, conversationId, target, body, answers }));
    if (compaction.message) await writeCompaction(services, { tenant, conversationId, message: compaction.message });
    const started = answers
      ? await answer(deps, { tenant, conversationId, target, body, input })
      : await start(deps, { tenant, conversationId, target, body, input });
    const created: CreatedResponse = {
      id: newId("resp"),
      tenant,
      createdAt: new Date(),
      conversationId,
      ...started,
      runId: started.run.id,
      previousResponseId: body.previous_response_id ?? null,
      background: body.background ?? false,
      echo: echoOf(body, named),
      throwaway,
      tools: { serverTools: conversation.tools, approvalRequired: conversation.approval_required },
    };
    if (store)
      await services.store.openaiResponses.insert({
        id: created.id,
        tenantId: tenant,
        conversationId,
        runId: created.run.id,
        afterEvent: created.afterEvent,
        fromSeq: created.fromSeq,
        previousResponseId: created.previousResponseId,
        background: created.background,
        request: created.echo as unknown as Record<string, unknown>,
        createdAt: created.createdAt,
      });
    return created;
  } catch (err) {
    // What this request made (a conversation, a fork, a throwaway copy) is not left behind when it is refused.
    if (throwaway || made || forked) await conversations.delete(tenant, conversationId, deps.runs).catch(() => {});
    if (throwaway) services.throwaways?.release(conversationId);
    throw err;
  }
}

function newConversation(target: ModelTarget, body: CreateResponseBody) {
  const client_tools = clientToolsOf(body);
  return target.kind === "agent"
    ? { agent: { name: target.name, version: target.version! }, client_tools }
    : { provider: target.provider, model: target.model, client_tools };
}

/** The request's function tools become the conversation's client tools; a model of another provider moves it there. The conversation as it then stands. */
async function settleConversation(
  { conversations }: ResponseDeps,
  {
    tenant,
    conversationId,
    target,
    body,
    answers,
  }: { tenant: string; conversationId: string; target: ModelTarget; body: CreateResponseBody; answers: boolean },
) {
  const current = await conversations.get(tenant, conversationId);
  const tools = clientToolsOf(body);
  // An answer without tools keeps those its calls were made with.
  const toolsChange =
    !(answers && body.tools == null) && JSON.stringify(tools) !== JSON.stringify(current.client_tools);
  const providerChange = target.kind === "model" && target.provider !== current.provider;
  if (!toolsChange && !providerChange) return current;
  return conversations.update(tenant, conversationId, {
    ...(toolsChange && { client_tools: tools }),
    ...(providerChange && { provider: target.provider, model: target.model }),
  });
}

async function start(
  { services, runs }: ResponseDeps,
  {
    tenant,
    conversationId,
    target,
    body,
    input,
  }: { tenant: string; conversationId: string; target: ModelTarget; body: CreateResponseBody; input: ResponseInput },
) {
  const instructions = [body.instructions, ...input.instructions].filter((s) => s != null && s !== "").join("\n\n");
  const { history } = input;
  const { run } = await sendMessage(
    { services, runs },
    {
      tenant,
      conversationId,
      content: input.content,
      ...(history && {
        prelude: historyPrelude(services, { tenant, conversationId, history, opens: input.content.length === 0 }),
      }),
      contentField: (i) => `body.input[${i}]`,
      textField: "body.input",
      toolChoice: toolChoiceOf(body.tool_choice),
      ...(target.kind === "model" && { model: target.model }),
      finish: finishOf(body),
      instructions: instructions === "" ? null : instructions,
      maxOutputTokens: body.max_output_tokens ?? null,
    },
  );
  return { run, afterEvent: 0, fromSeq: run.firstSeq };
}

type BodyItem = Exclude<CreateResponseBody["input"], string | null | undefined>[number];
/** Answers never come with a compaction (refused above): the items as `inputOfItems` reads them. */
const withoutCompactions = (input: CreateResponseBody["input"]) =>
  typeof input === "string"
    ? input
    : (input ?? []).filter((item): item is Exclude<BodyItem, { type: "compaction" }> => item.type !== "compaction");

/** Answers to the paused run's calls; function outputs with no paused run are the end of a history the client keeps (`conversation`). */
async function answer(
  deps: ResponseDeps,
  r: { tenant: string; conversationId: string; target: ModelTarget; body: CreateResponseBody; input: ResponseInput },
) {
  const { services, runs, conversations } = deps;
  const { tenant, conversationId, input } = r;
  const conversation = await conversations.get(tenant, conversationId);
  const waiting = conversation.active_run_id
    ? await services.store.runs.getOfTenant(tenant, conversation.active_run_id)
    : undefined;
  if (waiting?.status !== "requires_action" && input.approvals.length === 0)
    return start(deps, { ...r, input: inputOfItems(withoutCompactions(r.body.input), { asHistory: true }) });
  if (waiting?.status !== "requires_action")
    throw bad(
      "input",
      "no call waits for an answer: the previous response ended without function calls or approval requests",
    );
  if (input.content.length > 0) throw answerFirst();
  const answered = await answerAction(
    { services, runs },
    { tenant, conversationId, runId: waiting.id, approvals: input.approvals, toolOutputs: input.toolOutputs },
  ).catch((err: unknown) => {
    throw err instanceof AppError && err.code === "invalid_request" ? bad("input", err.message) : err;
  });
  return { run: answered.run, afterEvent: answered.afterEventSeq, fromSeq: answered.firstMessageSeq };
}
