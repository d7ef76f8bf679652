import type { ProviderName } from "../core/model-provider.js";
import type { HistoryFormat } from "../providers/registry.js";
import type { ContextSettings } from "../core/context-settings.js";
import { AppError, notFound } from "../errors.js";
import { toolsOfTenant } from "../tools/tools-of-tenant.js";
import type { RunManager } from "../runs/run-manager.js";
import type { Services } from "../services.js";
import type { BudgetInput, ClientTool, RunRow, WebhookSetting } from "../store/schema.js";
import { checkWebhookUrl } from "../webhooks/check-webhook-url.js";
import { checkToolSettings } from "./check-tool-settings.js";
import { defaultProviderOf } from "./check-model.js";
import { checkConversationModels } from "./check-conversation-models.js";
import { capBudget } from "./settle-budget.js";
import type { FinishOptions } from "../core/run-settings.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { presentConversation, presentMessage, presentRun } from "./present.js";
import { historyAs, nextCallOf } from "./conversation-context.js";

export interface CreateConversationInput {
  system?: string | null | undefined;
  title?: string | null | undefined;
  provider?: ProviderName | undefined;
  model?: string | undefined;
  tools?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
  approval_required?: string[] | undefined;
  client_tools?: ClientTool[] | undefined;
  action_timeout_s?: number | null | undefined;
  budget?: BudgetInput | null | undefined;
  finish?: FinishOptions | null | undefined;
  context?: ContextSettings | null | undefined;
  caching?: boolean | undefined;
  webhook?: WebhookSetting | null | undefined;
}

/** Conversations, their history and their runs: the read and bookkeeping use cases. */
export function createConversationService(services: Services) {
  const { store, config, providers, registry } = services;

  /** A tenant's conversation; another tenant's is not found, as an unknown id is not. */
  const load = async (tenant: string, id: string) => {
    const row = await store.conversations.get(tenant, id);
    if (!row) throw notFound("conversation", id);
    return row;
  };

  const checkTools = (tenant: string, tools: string[]) => {
    const registry = toolsOfTenant(services.registry, {
      tenant,
      commandTenants: config.tools.sandbox.runCommandTenants,
    });
    const unknown = tools.filter((name) => !registry.accepts(name));
    if (unknown.length > 0) {
      throw new AppError(
        "invalid_request",
        `unknown tool ${unknown.map((n) => JSON.stringify(n)).join(", ")}; available: ${registry.names().join(", ")}`,
        {
          field: "body.tools",
          unknown,
          available: registry.names(),
        },
      );
    }
    return [...new Set(tools)];
  };
  const defaultModelOf = (provider: ProviderName) =>
    provider === config.models.defaultProvider && config.models.defaultModel
      ? config.models.defaultModel
      : providers[provider].defaultModel;

  return {
    /** `chatId`: the AI SDK chat id that names it on `/ui/chat`. */
    async create(tenant: string, input: CreateConversationInput, { chatId = null }: { chatId?: string | null } = {}) {
      const provider = input.provider ?? defaultProviderOf(config);
      const model = input.model ?? defaultModelOf(provider);
      const budget = input.budget ? capBudget(input.budget, config.ceilings) : null;
      checkConversationModels(services, { provider, model, context: input.context, budget, fields: BODY_FIELDS });
      // run_command is offered only to a conversation that names it.
      const tools = checkTools(tenant, input.tools ?? registry.defaults());
      if (input.webhook) await checkWebhookUrl(input.webhook.url, { config, field: "body.webhook.url", tenant });
      const row = await store.conversations.create({
        tenantId: tenant,
        title: input.title ?? null,
        system: input.system ?? null,
        provider,
        model,
        tools,
        metadata: input.metadata ?? {},
        ...checkToolSettings({
          tools,
          approvalRequired: input.approval_required ?? [],
          clientTools: input.client_tools ?? [],
        }),
        actionTimeoutS: input.action_timeout_s ?? null,
        budget,
        finish: input.finish ?? null,
        context: input.context ?? null,
        caching: input.caching ?? true,
        webhook: input.webhook ?? null,
        chatId,
      });
      return presentConversation(row);
    },

    /**
     * Changes settings for the runs to come. Switching provider keeps the
     * history: it is provider-neutral and converted on every call; the model
     * becomes that provider's default unless one is given.
     */
    async update(tenant: string, id: string, input: CreateConversationInput) {
      const current = await load(tenant, id);
      const switching = input.provider !== undefined && input.provider !== current.provider;
      const model = input.model ?? (switching ? defaultModelOf(input.provider!) : current.model);
      const budget = input.budget ? capBudget(input.budget, config.ceilings) : input.budget;
      // Checked as they will stand, when the change touches them (a title's change does not refuse a conversation made under other settings).
      if ([input.provider, input.model, input.context, input.budget].some((v) => v !== undefined)) {
        const given = (field: keyof typeof BODY_FIELDS, set: boolean) =>
          set ? BODY_FIELDS[field] : CONVERSATION_FIELDS[field];
        checkConversationModels(services, {
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
      }
      const tools = input.tools !== undefined ? checkTools(tenant, input.tools) : current.tools;
      // Checked together as they will stand: a new tool list must still hold every tool that needs approval.
      const settings = checkToolSettings({
        tools,
        approvalRequired: input.approval_required ?? current.approvalRequired,
        clientTools: input.client_tools ?? current.clientTools,
      });
      if (input.webhook) await checkWebhookUrl(input.webhook.url, { config, field: "body.webhook.url", tenant });
      const row = await store.conversations.update(tenant, id, {
        ...settings,
        ...(input.webhook !== undefined && { webhook: input.webhook }),
        ...(input.action_timeout_s !== undefined && { actionTimeoutS: input.action_timeout_s }),
        ...(budget !== undefined && { budget }),
        ...(input.finish !== undefined && { finish: input.finish }),
        ...(input.context !== undefined && { context: input.context }),
        ...(input.caching !== undefined && { caching: input.caching }),
        ...(input.title !== undefined && { title: input.title }),
        ...(input.system !== undefined && { system: input.system }),
        ...(input.provider !== undefined && { provider: input.provider }),
        ...((input.model !== undefined || switching) && { model }),
        ...(input.tools !== undefined && { tools }),
        ...(input.metadata !== undefined && { metadata: input.metadata }),
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
      const active = await store.runs.activeOf(id);
      // Deleted first, stopped after: a run stopped first could record its
      // cancellation before the delete, and its readers would see that
      // instead of the deletion. Once the rows are gone its writes are refused.
      if (!(await store.conversations.delete(tenant, id))) throw notFound("conversation", id);
      if (active && !runs.cancelLocal(active.id)) await store.notify("loopd_run_cancel", active.id);
      // Whoever follows a run of it (in another process: through the delete's NOTIFY) finds it gone,
      // not a write of it kept in memory.
      services.signals.forgetConversation(id);
      services.signals.notify(id);
      services.histories.forget(id);
    },

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

/** The fields a 400 about a conversation's models names: the body's, or the conversation's as it stands. */
const BODY_FIELDS = {
  provider: "body.provider",
  model: "body.model",
  summaryModel: "body.context.summary_model",
  conversationCost: "body.budget.max_cost_usd",
};
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
