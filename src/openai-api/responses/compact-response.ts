import { admit } from "../../conversations/send-message.js";
import { AppError } from "../../errors.js";
import { isProviderName } from "../../providers/registry.js";
import { newId } from "../../store/ids.js";
import { emptyUsage, type RunUsage } from "../../core/usage.js";
import { recordCompactionRun } from "./record-compaction-run.js";
import { openAiError } from "../openai-errors.js";
import type { CompactBody } from "./compact-body.js";
import { callForSummary } from "./compact-summary-call.js";
import { addInput, sourceOfHistory, type CompactSource } from "./compact-transcript.js";
import { compactionKey } from "./compaction-key.js";
import { openCompactionItems } from "./compaction-input.js";
import { sealCompaction } from "./compaction-seal.js";
import type { ResponseDeps } from "./create-response.js";
import { usageOf } from "./present-response.js";
import { resolveModel } from "./resolve-model.js";

/** The spec's `CompactResource`. */
export interface CompactResource {
  id: string;
  object: "response.compaction";
  created_at: number;
  output: Array<{ type: "compaction"; id: string; encrypted_content: string; created_by: string }>;
  usage: ReturnType<typeof usageOf>;
}

const bad = (param: string, message: string, openaiCode: string | null = null) =>
  openAiError("invalid_request", message, { param, openaiCode });

/**
 * `POST /v1/responses/compact`: what `previous_response_id` (its
 * conversation up to that response) and `input` hold, condensed by one
 * model call with loopd's summary prompt into a `compaction` item whose
 * `encrypted_content` is the summary sealed for this tenant. The call is
 * recorded as a run (steps 0) of a conversation of its own, so its tokens
 * and cost count in `GET /usage` and the tenant's daily cost as any run's.
 * Nothing of the history compacted changes.
 */
export async function compactResponse(
  deps: ResponseDeps,
  { tenant, body, signal }: { tenant: string; body: CompactBody; signal: AbortSignal },
): Promise<CompactResource> {
  const { services, conversations } = deps;
  const input = body.input ?? [];
  if (!body.previous_response_id && input.length === 0)
    throw bad("input", "nothing to compact: send input, previous_response_id, or both");
  const key = await compactionKey(services);
  const opened = openCompactionItems(key, tenant, input);
  const target = await resolveModel(services, { tenant, model: body.model });
  let source: CompactSource = { previous: null, messages: [] };
  if (body.previous_response_id)
    source = sourceOfHistory(await historyOfPrevious(deps, { tenant, id: body.previous_response_id }));
  source = addInput(source, input, opened);
  const createdAt = new Date();
  const id = newId("resp");
  const resource = (summary: string, usage: RunUsage): CompactResource => ({
    id,
    object: "response.compaction",
    created_at: Math.floor(createdAt.getTime() / 1000),
    output: [
      {
        type: "compaction",
        id: newId("cmp"),
        encrypted_content: sealCompaction(key, tenant, { summary, created_at: Math.floor(createdAt.getTime() / 1000) }),
        created_by: "loopd",
      },
    ],
    usage: usageOf(usage),
  });
  // A compaction of a compaction alone: the summary as it is, no call.
  if (source.messages.length === 0) {
    if (source.previous === null) throw bad("input", "nothing to compact: the input holds no message");
    return resource(source.previous, emptyUsage());
  }
  admit(services);
  await services.tenantCost.check(tenant);
  const conversation = await conversations.create(tenant, {
    title: "Compaction (POST /v1/responses/compact)",
    ...(target.kind === "agent"
      ? { agent: { name: target.name, version: target.version! } }
      : { provider: target.provider, model: target.model }),
  });
  const providerName = conversation.provider;
  if (!isProviderName(providerName)) throw new AppError("internal", `unknown provider ${providerName}`);
  const model = conversation.context.summary_model ?? conversation.model;
  const startedAt = Date.now();
  const called = await callForSummary({
    provider: services.providers[providerName],
    model,
    source,
    instructions: body.instructions ?? null,
    cacheKey: body.prompt_cache_key ?? null,
    config: services.config,
    signal,
  });
  const usage = await recordCompactionRun(services, {
    tenant,
    conversationId: conversation.id,
    provider: providerName,
    model,
    called,
    messages: source.messages.length,
    instructions: body.instructions ?? null,
    startedAt,
  });
  if (called.type === "failed") {
    if (signal.aborted) throw new AppError("unavailable", "the compaction was stopped before the model answered");
    services.log.warn(
      { tenant, provider: providerName, model, err: called.message },
      "compaction: summary call failed",
    );
    throw new AppError("unavailable", "the model could not write the compaction's summary; try again shortly", {
      reason: "model_failed",
    });
  }
  return resource(called.text, usage);
}

/** The history up to the end of a stored response (its conversation's latest, or an earlier one). */
async function historyOfPrevious({ services }: ResponseDeps, { tenant, id }: { tenant: string; id: string }) {
  const { store } = services;
  const previous = await store.openaiResponses.get(tenant, id);
  if (!previous)
    throw bad("previous_response_id", `Previous response with id '${id}' not found.`, "previous_response_not_found");
  const history = await store.messages.history(previous.conversationId);
  const next = await store.openaiResponses.nextInConversation(previous);
  // `history[i]` has seq i + 1: what came before the next response's first message is this one's.
  return next?.fromSeq != null ? history.slice(0, next.fromSeq - 1) : history;
}
