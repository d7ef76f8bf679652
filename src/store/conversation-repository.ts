import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { isLockConflict } from "./unique-violation.js";
import type { Db } from "./db.js";
import { newId } from "./ids.js";
import { olderThan, pageOf, type Keyset } from "./keyset.js";
import { discardAtIn } from "./retention-repository.js";
import type { ContextSettings } from "../core/context-settings.js";
import type { FinishOptions } from "../core/run-settings.js";
import { toUsageTotals, type UsageTotals } from "./usage-totals.js";
import {
  conversations,
  OPEN_RUN_STATUSES,
  runs,
  type BudgetInput,
  type ClientTool,
  type ModelFallback,
  type Configuration,
  type ConversationParent,
  type ConversationRow,
  type OnProviderOutage,
  type WebhookSetting,
} from "./schema.js";

export type ConversationWithActiveRun = ConversationRow & {
  messageCount: number;
  activeRunId: string | null;
  usage: UsageTotals;
};

/** Whose conversations a query may see: a tenant's, or any (`INTERNAL`: the run engine, on a run it holds). */
// Every query of a conversation takes one, so none can forget it.
export const INTERNAL = Symbol("any tenant");
export type TenantScope = string | typeof INTERNAL;
const inScope = (scope: TenantScope) => (scope === INTERNAL ? undefined : eq(conversations.tenantId, scope));
const pastDiscard = sql`${conversations.discardAt} < now()`;

export interface NewConversation {
  /** @default "default" */
  tenantId?: string;
  title: string | null;
  system: string | null;
  provider: string;
  model: string;
  tools: string[];
  metadata: Record<string, unknown>;
  /** @default [] */
  approvalRequired?: string[];
  /** @default [] */
  clientTools?: ClientTool[];
  /** @default null: the server's */
  actionTimeoutS?: number | null;
  /** @default null: the server's */
  budget?: BudgetInput | null;
  /** @default null: runs end without a `finish` call */
  finish?: FinishOptions | null;
  /** @default null: the whole history */
  context?: ContextSettings | null;
  /** @default null: no AI SDK chat names it */
  chatId?: string | null;
  /** @default true */
  caching?: boolean;
  /** @default "fail" */
  onProviderOutage?: OnProviderOutage;
  /** @default null: no webhook */
  webhook?: WebhookSetting | null;
  /** @default null: not a fork */
  forkedFrom?: { conversation_id: string; seq: number } | null;
  /** @default null: no fallbacks */
  fallbacks?: ModelFallback[] | null;
  /** @default null: not started from an agent */
  agentName?: string | null;
  agentVersion?: number | null;
  agentOverrides?: Configuration | null;
  /** @default []: calls no agent */
  agents?: string[];
  /** @default null: not a child agent's */
  parent?: ConversationParent | null;
  /** A throw-away's: marked in the statement that makes it (see throwaway-keeper.ts). @default a stored one */
  discardInMs?: number | undefined;
}

export function createConversationRepository({ db, notifies }: { db: Db; notifies: boolean }) {
  // Matches the partial index runs_one_active_per_conversation_key, so it is an index lookup.
  const activeRunId = sql<
    string | null
  >`(select r.id from runs r where r.conversation_id = "conversations"."id" and r.status in ('queued', 'running', 'requires_action', 'waiting') order by r.status = 'queued', r.queue_rank, r.queue_order limit 1)`;
  // The history's length, read off the end of its primary key.
  const messageCount =
    sql<number>`(select coalesce(max(m.seq), 0) from messages m where m.conversation_id = "conversations"."id")`.mapWith(
      Number,
    );
  // What its runs used (so far, a running one: `loopd_run_usage`), summed where they are (a conversation has few runs next to its messages).
  const usage = sql<UsageTotals>`(select jsonb_build_object(
      'input_tokens', coalesce(sum((loopd_run_usage(r)->>'input_tokens')::bigint), 0),
      'output_tokens', coalesce(sum((loopd_run_usage(r)->>'output_tokens')::bigint), 0),
      'cache_read_tokens', coalesce(sum((loopd_run_usage(r)->>'cache_read_tokens')::bigint), 0),
      'cache_write_tokens', coalesce(sum((loopd_run_usage(r)->>'cache_write_tokens')::bigint), 0),
      'cost_usd', round(sum((loopd_run_usage(r)->>'cost_usd')::numeric), 9))
    from runs r where r.conversation_id = "conversations"."id")`.mapWith(toUsageTotals);
  const withActiveRun = { ...conversationColumns(), messageCount, activeRunId, usage };

  return {
    async create({ discardInMs, ...input }: NewConversation): Promise<ConversationWithActiveRun> {
      const mark = discardInMs === undefined ? {} : { discardAt: discardAtIn(discardInMs) };
      const [row] = await db
        .insert(conversations)
        .values({ id: newId("conv"), ...input, ...mark })
        .returning();
      return { ...row!, messageCount: 0, activeRunId: null, usage: toUsageTotals(null) };
    },

    /** Another tenant's conversation is not found, as an unknown id is not. */
    async get(scope: TenantScope, id: string): Promise<ConversationWithActiveRun | undefined> {
      const [row] = await db
        .select(withActiveRun)
        .from(conversations)
        .where(and(eq(conversations.id, id), inScope(scope)));
      return row;
    },

    /**
     * Conversations by id, of any tenant (the caller checks whose each is),
     * with the run that holds each: what starting a run needs, without the
     * totals `get` adds up.
     */
    async manyWithActiveRun(ids: string[]): Promise<Array<ConversationRow & { activeRunId: string | null }>> {
      return db
        .select({ ...conversationColumns(), activeRunId })
        .from(conversations)
        .where(inArray(conversations.id, ids));
    },

    /** The child conversation a run's call of an agent started, if it did (one per call: `conversations_parent_call_key`). */
    async childOf(tenant: string, { runId, toolCallId }: { runId: string; toolCallId: string }) {
      const [row] = await db
        .select(withActiveRun)
        .from(conversations)
        .where(
          and(
            eq(conversations.tenantId, tenant),
            sql`${conversations.parent}->>'run_id' = ${runId}`,
            sql`${conversations.parent}->>'tool_call_id' = ${toolCallId}`,
          ),
        );
      return row;
    },

    /** A tenant's conversation named by an AI SDK chat id. */
    async getByChatId(tenant: string, chatId: string): Promise<ConversationWithActiveRun | undefined> {
      const [row] = await db
        .select(withActiveRun)
        .from(conversations)
        .where(and(eq(conversations.tenantId, tenant), eq(conversations.chatId, chatId)));
      return row;
    },

    /** A tenant's, newest first; fetches one extra row to know whether there is a next page. */
    async list(tenant: string, { limit, after }: { limit: number; after?: Keyset | undefined }) {
      const rows = await db
        .select(withActiveRun)
        .from(conversations)
        .where(and(eq(conversations.tenantId, tenant), olderThan(conversations.createdAt, conversations.id, after)))
        .orderBy(desc(conversations.createdAt), desc(conversations.id))
        .limit(limit + 1);
      return pageOf(rows, limit);
    },

    /**
     * Deletes the conversation; messages, runs and events go with it (ON
     * DELETE CASCADE; messages by migration 0027's trigger), and the readers of its runs are told when this commits
     * (`loopd_run_events` with the conversation's id). False when there was
     * no such conversation. Open runs' rows (paused ones too) are locked first, in the order
     * a run's own writes take them (run, then conversation). A run created
     * meanwhile can still make the two collide; Postgres then breaks the
     * deadlock by failing one side, and the delete tries again. `overdue`: only a throw-away whose time has
     * passed, checked under its lock (one renewed since it was read is not).
     */
    async delete(scope: TenantScope, id: string, { overdue = false } = {}): Promise<boolean> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await db.transaction(async (tx) => {
            // The conversation's lock first, as every creator of a run (and the starter of a queued one) takes it.
            await tx
              .select({ id: conversations.id })
              .from(conversations)
              .where(eq(conversations.id, id))
              .for("no key update");
            await tx
              .select({ id: runs.id })
              .from(runs)
              // Paused runs too: an answer, a supersede or a cancel locks the run before it writes to the conversation.
              .where(and(eq(runs.conversationId, id), inArray(runs.status, [...OPEN_RUN_STATUSES])))
              .for("update");
            const deleted = await tx
              .delete(conversations)
              .where(and(eq(conversations.id, id), inScope(scope), overdue ? pastDiscard : undefined))
              .returning({ id: conversations.id });
            if (notifies && deleted.length > 0) await tx.execute(sql`select pg_notify('loopd_run_events', ${id})`);
            return deleted.length > 0;
          });
        } catch (err) {
          if (attempt >= 3 || !isLockConflict(err)) throw err;
        }
      }
    },

    async update(
      scope: TenantScope,
      id: string,
      patch: Partial<Omit<NewConversation, "tenantId">>,
    ): Promise<ConversationWithActiveRun | undefined> {
      const [row] = await db
        .update(conversations)
        .set({ ...patch, updatedAt: new Date() })
        .where(and(eq(conversations.id, id), inScope(scope)))
        .returning({ id: conversations.id });
      return row ? this.get(scope, id) : undefined;
    },
  };
}

function conversationColumns() {
  const {
    id,
    tenantId,
    createdAt,
    updatedAt,
    title,
    system,
    provider,
    model,
    tools,
    metadata,
    approvalRequired,
    clientTools,
    actionTimeoutS,
    budget,
    finish,
    context,
    caching,
    onProviderOutage,
    historyVersion,
    chatId,
    webhook,
    forkedFrom,
    fallbacks,
    agentName,
    agentVersion,
    agentOverrides,
    agents,
    parent,
    discardAt,
  } = conversations;
  return {
    id,
    tenantId,
    createdAt,
    updatedAt,
    title,
    system,
    provider,
    model,
    tools,
    metadata,
    approvalRequired,
    clientTools,
    actionTimeoutS,
    budget,
    finish,
    context,
    caching,
    onProviderOutage,
    historyVersion,
    chatId,
    webhook,
    forkedFrom,
    fallbacks,
    agentName,
    agentVersion,
    agentOverrides,
    agents,
    parent,
    discardAt,
  };
}

export type ConversationRepository = ReturnType<typeof createConversationRepository>;
