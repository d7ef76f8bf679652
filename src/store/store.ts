import { sql } from "drizzle-orm";
import { createActionRepository } from "./action-repository.js";
import { createAgentRepository } from "./agent-repository.js";
import { createAttachmentRepository } from "./attachment-repository.js";
import { createConversationRepository } from "./conversation-repository.js";
import type { Database, Db } from "./db.js";
import { createEventRepository } from "./event-repository.js";
import { createKeyRepository } from "./key-repository.js";
import { createUsageRepository } from "./usage-repository.js";
import { createRetentionRepository } from "./retention-repository.js";
import { createMessageRepository } from "./message-repository.js";
import { createRunRepository } from "./run-repository.js";
import { createRunQueueRepository } from "./run-queue-repository.js";
import { createForkRepository } from "./fork-repository.js";
import { createOpenaiResponseRepository } from "./openai-response-repository.js";
import { createServerKeyRepository } from "./server-key-repository.js";
import { createTraceRepository } from "./trace-repository.js";
import { createWebhookRepository } from "./webhook-repository.js";
import { createWebhookSecretRepository } from "./webhook-secret-repository.js";
import { createSharedLimitRepository } from "./shared-limit-repository.js";
import { createRunSaver, type RunSave } from "./save-run-step.js";
import { createRunStarter, type RunStarter } from "./start-runs.js";
import { grouped } from "./group-commit.js";
import { INTERNAL, type TenantScope } from "./conversation-repository.js";
import type { ConversationRow } from "./schema.js";

/** Channels of the nudges loopd processes send each other through the database (ids only, never payloads). */
export type NotifyChannel = "loopd_run_events" | "loopd_run_cancel" | "loopd_run_queued" | "loopd_webhooks";

/** Every repository over one connection (or one transaction). */
/** `save` and `start` are the process's (group commit), whatever connection or transaction the rest use. */
function createRepositories(
  db: Db,
  { notifies, save, start }: { notifies: boolean; save: (step: RunSave) => Promise<Date | null>; start: RunStarter },
) {
  return {
    conversations: createConversationRepository({ db, notifies }),
    messages: createMessageRepository({ db }),
    runs: createRunRepository({ db, save, start }),
    queue: createRunQueueRepository({ db }),
    forks: createForkRepository({ db }),
    events: createEventRepository({ db }),
    actions: createActionRepository({ db }),
    traces: createTraceRepository({ db }),
    keys: createKeyRepository({ db }),
    usage: createUsageRepository({ db }),
    retention: createRetentionRepository({ db }),
    webhooks: createWebhookRepository({ db }),
    webhookSecrets: createWebhookSecretRepository({ db }),
    attachments: createAttachmentRepository({ db }),
    agents: createAgentRepository({ db }),
    sharedLimits: createSharedLimitRepository({ db }),
    openaiResponses: createOpenaiResponseRepository({ db }),
    serverKeys: createServerKeyRepository({ db }),
    /**
     * Nudges every loopd process listening on `channel` (Postgres NOTIFY): in
     * a transaction it is sent when the transaction commits. The embedded
     * database has a single process, so there it does nothing.
     */
    async notify(channel: NotifyChannel, id: string): Promise<void> {
      if (notifies) await db.execute(sql`select pg_notify(${channel}, ${id})`);
    },
  };
}

export type Repositories = ReturnType<typeof createRepositories>;

type ConversationAsked = { scope: TenantScope; id: string };
export type ConversationForRun = ConversationRow & { activeRunId: string | null };

/**
 * The repositories, plus `transaction`, which hands its callback the same
 * repositories bound to one transaction: callers never see the driver's
 * transaction type.
 */
export function createStore({
  db,
  kind,
  query,
  longestWaitMs,
  connections,
}: Pick<Database, "db" | "kind" | "query" | "longestWaitMs" | "connections">) {
  // NOTIFY reaches other processes, which only a database server has.
  const notifies = kind === "postgres";
  // Group commit (see `grouped`): runs' saves take at most a quarter of the pool at once, runs started and the
  // conversations read to start them a tenth each; what comes while those are taken goes in the next statement
  // together. Fewer statements in flight make bigger groups: at 200 runs at once, a quarter and a tenth cost
  // 8.0 ms of CPU per run against 9.5 with a half and a fifth (the bench's (f)). The rest of the pool stays free
  // for everything else. (Saves of a transaction's repositories go through this too: each is a statement of its
  // own, never the transaction's.)
  const save = createRunSaver({ query, notifies, slots: Math.max(1, Math.floor(connections / 4)) });
  const slots = Math.max(1, Math.floor(connections / 10));
  const start = createRunStarter({ query, slots });
  const repositories = createRepositories(db, { notifies, save, start });
  const manyForRun = async (asked: ConversationAsked[]): Promise<Array<ConversationForRun | undefined>> => {
    const rows = new Map(
      (await repositories.conversations.manyWithActiveRun([...new Set(asked.map((a) => a.id))])).map((row) => [
        row.id,
        row,
      ]),
    );
    return asked.map(({ scope, id }) => {
      const row = rows.get(id);
      return row && (scope === INTERNAL || row.tenantId === scope) ? row : undefined;
    });
  };
  const conversationForRun = grouped<ConversationAsked, ConversationForRun | undefined>({
    slots,
    one: async (asked) => (await manyForRun([asked]))[0],
    many: manyForRun,
  });
  return {
    ...repositories,
    /**
     * A conversation a run is about to start on, with the run that holds it
     * (undefined when it is not the tenant's): the requests that send
     * messages at the same moment read theirs together (group commit).
     */
    conversationForRun,
    /** See `Database.longestWaitMs`; statements waiting for their turn in a group (group commit) wait for the database too. */
    longestWaitMs: () =>
      Math.max(longestWaitMs(), save.longestWaitMs(), start.longestWaitMs(), conversationForRun.longestWaitMs()),
    transaction: <T>(fn: (tx: Repositories) => Promise<T>): Promise<T> =>
      db.transaction((tx) => fn(createRepositories(tx as unknown as Db, { notifies, save, start }))),
  };
}

export type Store = ReturnType<typeof createStore>;
