import type { ProviderName } from "../core/model-provider.js";
import type { HistoryFormat } from "../providers/registry.js";
import { notFound } from "../errors.js";
import type { RunManager } from "../runs/run-manager.js";
import type { Services } from "../services.js";
import type { Configuration, ConversationParent, ModelFallback, RunRow } from "../store/schema.js";
import { checkWebhookUrl } from "../webhooks/check-webhook-url.js";
import { checkToolSettings } from "./check-tool-settings.js";
import { checkAgents } from "./check-agents.js";
import { checkConversationModels } from "./check-conversation-models.js";
import { checkFallbacks, costLimitOf } from "./check-fallbacks.js";
import { capBudget } from "./settle-budget.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { presentConversation, presentMessage, presentRun } from "./present.js";
import { historyAs, nextCallOf } from "./conversation-context.js";
import { givenFields, pinAgent, type AgentPin } from "./pin-agent.js";
import { BODY_FIELDS, checkTools, defaultModelOf, settleConfiguration } from "./settle-configuration.js";
import { moveAgentVersion, overridesAfter } from "./move-agent-version.js";

/** A conversation's fields as a client writes them: its configuration, its title, the agent it starts from. */
export type CreateConversationInput = Configuration & {
  title?: string | null | undefined;
  agent?: AgentPin | undefined;
};

/** A change: the same fields, and `agent_version` to move it to another version of its agent. */
export type UpdateConversationInput = Omit<CreateConversationInput, "agent"> & { agent_version?: number | undefined };

/** Conversations, their history and their runs: the read and bookkeeping use cases. */
export function createConversationService(services: Services) {
  const { store, config } = services;

  /** A tenant's conversation; another tenant's is not found, as an unknown id is not. */
  const load = async (tenant: string, id: string) => {
    const row = await store.conversations.get(tenant, id);
    if (!row) throw notFound("conversation", id);
    return row;
  };

  const remove = async (tenant: string, id: string, runs: Pick<RunManager, "cancelLocal">, options = {}) => {
    const active = await store.runs.activeOf(id);
    // Deleted first, stopped after: a run stopped first could record its
    // cancellation before the delete, and its readers would see that
    // instead of the deletion. Once the rows are gone its writes are refused.
    if (!(await store.conversations.delete(tenant, id, options))) return false;
    if (active && !runs.cancelLocal(active.id)) await store.notify("loopd_run_cancel", active.id);
    // Whoever follows a run of it (in another process: through the delete's NOTIFY) finds it gone,
    // not a write of it kept in memory.
    services.signals.forgetConversation(id);
    services.signals.notify(id);
    services.histories.forget(id);
    return true;
  };

  return {
    /**
     * `chatId`: the AI SDK chat id that names it on `/ui/chat`; `parent`: the
     * call of an agent it is the child of; `throwaway`: a `store: false`
     * response's, made marked for deletion (see throwaway-keeper.ts).
     */
    async create(
      tenant: string,
      input: CreateConversationInput,
      {
        chatId = null,
        parent = null,
        throwaway = false,
      }: { chatId?: string | null; parent?: ConversationParent | null; throwaway?: boolean } = {},
    ) {
      const { title, agent, ...fields } = input;
      // Pinned to a version of the agent: its configuration, with the fields given beside it over it.
      const pinned = agent === undefined ? null : await pinAgent(store, { tenant, pin: agent });
      const overrides = givenFields(fields);
      const row = await store.conversations.create({
        tenantId: tenant,
        title: title ?? null,
        ...(await settleConfiguration(services, tenant, { ...pinned?.at.configuration, ...overrides })),
        chatId,
        parent,
        ...(pinned && { agentName: pinned.name, agentVersion: pinned.at.version, agentOverrides: overrides }),
        discardInMs: throwaway ? services.throwaways?.keepMs : undefined,
      });
      return presentConversation(row);
    },

    /**
     * Changes settings for the runs to come. Switching provider keeps the
     * history: it is provider-neutral and converted on every call; the model
     * becomes that provider's default unless one is given.
     */
    async update(tenant: string, id: string, { agent_version, ...input }: UpdateConversationInput) {
      const current = await load(tenant, id);
      if (agent_version !== undefined)
        return presentConversation(await moveAgentVersion(services, { current, to: agent_version, input }));
      const switching = input.provider !== undefined && input.provider !== current.provider;
      const model = input.model ?? (switching ? defaultModelOf(services, input.provider!) : current.model);
      const budget = input.budget ? capBudget(input.budget, config.ceilings) : input.budget;
      // Checked as they will stand, when the change touches them (a title's change does not refuse a conversation made under other settings).
      let fallbacks: ModelFallback[] | null | undefined;
      if ([input.provider, input.model, input.context, input.budget, input.fallbacks].some((v) => v !== undefined)) {
        const given = (field: keyof typeof BODY_FIELDS, set: boolean) =>
          set ? BODY_FIELDS[field] : CONVERSATION_FIELDS[field];
        const settled = checkConversationModels(services, {
          provider: input.provider ?? current.provider,
          model,
          context: input.context !== undefined ? input.context : current.context,
          budget: budget !== undefined ? budget : current.budget,
          fields: {
            provider: given("provider", input.provider !== undefined),
            model: given("model", input.model !== undefined),
            summaryModel: given("summaryModel", input.context !== undefined),
            conversationCost: given("conversationCost", input.budget !== undefined),
          },
        });
        // Stored fallbacks carry the provider they were settled with, so checked again as they stand.
        const chain = input.fallbacks !== undefined ? (input.fallbacks ?? []) : (current.fallbacks ?? []);
        const settledChain = checkFallbacks(services, {
          fallbacks: chain,
          provider: input.provider ?? current.provider,
          costLimit: costLimitOf(settled.max_cost_usd, config),
          field: input.fallbacks !== undefined ? "body.fallbacks" : "conversation.fallbacks",
        });
        if (input.fallbacks !== undefined) fallbacks = settledChain.length > 0 ? settledChain : null;
      }
      const tools = input.tools !== undefined ? checkTools(services, tenant, input.tools) : current.tools;
      // Checked together as they will stand: a new tool list must still hold every tool that needs approval.
      const settings = checkToolSettings({
        tools,
        approvalRequired: input.approval_required ?? current.approvalRequired,
        clientTools: input.client_tools ?? current.clientTools,
      });
      if (input.webhook) await checkWebhookUrl(input.webhook.url, { config, field: "body.webhook.url", tenant });
      const agents = input.agents !== undefined ? await checkAgents(services, tenant, input.agents) : undefined;
      const row = await store.conversations.update(tenant, id, {
        ...settings,
        ...(agents !== undefined && { agents }),
        ...(input.webhook !== undefined && { webhook: input.webhook }),
        ...(fallbacks !== undefined && { fallbacks }),
        ...(input.action_timeout_s !== undefined && { actionTimeoutS: input.action_timeout_s }),
        ...(budget !== undefined && { budget }),
        ...(input.finish !== undefined && { finish: input.finish }),
        ...(input.context !== undefined && { context: input.context }),
        ...(input.caching !== undefined && { caching: input.caching }),
        ...(input.on_provider_outage !== undefined && { onProviderOutage: input.on_provider_outage }),
        ...(input.title !== undefined && { title: input.title }),
        ...(input.system !== undefined && { system: input.system }),
        ...(input.provider !== undefined && { provider: input.provider }),
        ...((input.model !== undefined || switching) && { model }),
        ...(input.tools !== undefined && { tools }),
        ...(input.metadata !== undefined && { metadata: input.metadata }),
        // On a conversation from an agent, what changes is kept over every version it moves to.
        ...(current.agentName !== null && { agentOverrides: overridesAfter(current, input) }),
      });
      if (!row) throw notFound("conversation", id);
      return presentConversation(row);
    },

    get: async (tenant: string, id: string) => presentConversation(await load(tenant, id)),

    async list(tenant: string, { limit, cursor }: { limit: number; cursor?: string | undefined }) {
      return pageResponse(
        await store.conversations.list(tenant, { limit, after: cursor ? decodeCursor(cursor) : undefined }),
        presentConversation,
      );
    },

    /**
     * Deletes the conversation; a run still going is stopped first, and
     * whatever it tries to write after is refused. Its readers are woken to
     * find it gone.
     */
    async delete(tenant: string, id: string, runs: Pick<RunManager, "cancelLocal">) {
      await load(tenant, id);
      if (!(await remove(tenant, id, runs))) throw notFound("conversation", id);
    },

    /** A throw-away conversation past its time (its holder is gone), deleted as `delete` does; false when renewed or gone meanwhile. */
    discardOverdue: (tenant: string, id: string, runs: Pick<RunManager, "cancelLocal">) =>
      remove(tenant, id, runs, { overdue: true }),

    async messages({ tenant, id, afterSeq, limit }: { tenant: string; id: string; afterSeq: number; limit: number }) {
      await load(tenant, id);
      const rows = await store.messages.page({ conversationId: id, afterSeq, limit });
      const last = rows.at(-1);
      return { data: rows.map(presentMessage), next_after_seq: rows.length === limit && last ? last.seq : null };
    },

    /** The whole history as that provider's SDK takes it (whole: the summaries of parts of it are left out). */
    history: async ({ tenant, id, format }: { tenant: string; id: string; format: HistoryFormat }) =>
      historyAs(services, { tenant, conversation: await load(tenant, id), format }),

    /** Exactly what the conversation's next model call would be sent, as the provider's SDK would get it. */
    context: async ({ tenant, id, format }: { tenant: string; id: string; format?: ProviderName | undefined }) =>
      nextCallOf(services, { tenant, conversation: await load(tenant, id), format }),

    /** A run of a tenant's conversation; not found when the conversation is another's, or not its conversation. */
    async run({ tenant, id, runId }: { tenant: string; id: string; runId: string }) {
      const run = await store.runs.getOfTenant(tenant, runId);
      if (!run || run.conversationId !== id) throw notFound("run", runId);
      return run;
    },

    /** A run known by its id alone (its conversation is in it), if the tenant's. */
    async runById(tenant: string, runId: string) {
      const run = await store.runs.getOfTenant(tenant, runId);
      if (!run) throw notFound("run", runId);
      return run;
    },

    async runs({
      tenant,
      id,
      limit,
      cursor,
    }: {
      tenant: string;
      id: string;
      limit: number;
      cursor?: string | undefined;
    }) {
      await load(tenant, id);
      return pageResponse(
        await store.runs.list({ conversationId: id, limit, after: cursor ? decodeCursor(cursor) : undefined }),
        presentRun,
      );
    },

    /** The run's messages, from `fromSeq` (default: its first). */
    async messagesOfRun(run: RunRow, fromSeq: number | null = run.firstSeq) {
      return (await store.messages.ofRun({ conversationId: run.conversationId, runId: run.id, firstSeq: fromSeq })).map(
        presentMessage,
      );
    },
  };
}

/** The fields a 400 about a conversation's models names when they stand as they are. */
const CONVERSATION_FIELDS = {
  provider: "conversation.provider",
  model: "conversation.model",
  summaryModel: "conversation.context.summary_model",
  conversationCost: "conversation.budget.max_cost_usd",
};

/** `{data, next_cursor}` as the list routes answer. */
function pageResponse<R extends { createdAt: Date; id: string }, V>(
  page: { rows: R[]; hasMore: boolean },
  present: (row: R) => V,
) {
  const last = page.rows.at(-1);
  return { data: page.rows.map(present), next_cursor: page.hasMore && last ? encodeCursor(last) : null };
}

export type ConversationService = ReturnType<typeof createConversationService>;
