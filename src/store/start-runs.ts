import type { RawQuery } from "./db.js";
import { grouped, itemFailed, jsonArgument, jsonOf, type Grouped, type ItemFailure } from "./group-commit.js";
import { pgSafeJson } from "./pg-safe.js";
import { runFromJson } from "./run-columns.js";
import type { RunRow } from "./schema.js";

/** What every new run is made of, however it is created (started at once, in a transaction, or queued). */
export type NewRunFields = Pick<
  RunRow,
  "id" | "conversationId" | "provider" | "model" | "usage" | "request" | "idempotencyKey" | "requestHash"
> & { webhook?: RunRow["webhook"] };

export interface StartRun {
  run: NewRunFields & { leaseOwner: string };
  leaseMs: number;
  tenant: string;
  /** `MAX_ACTIVE_RUNS_PER_TENANT`; 0: no cap. */
  cap: number;
  messageId: string;
  content: unknown;
}

const START = {
  name: "loopd_start_run",
  text: "select loopd_start_run($1::jsonb, $2, $3, $4, $5, $6::jsonb) as started",
};
const START_MANY = {
  name: "loopd_start_runs",
  text: "select loopd_start_runs($1::jsonb) as results",
};

export type Started = { run: RunRow } | { openRuns: number } | null;

/** The run's columns by their names, as `loopd_start_run` reads them. */
const startRunJson = ({ run }: StartRun) => ({
  id: run.id,
  conversation_id: run.conversationId,
  provider: run.provider,
  model: run.model,
  usage: run.usage,
  request: run.request,
  idempotency_key: run.idempotencyKey,
  request_hash: run.requestHash,
  lease_owner: run.leaseOwner,
  webhook: run.webhook ?? null,
});

const startedOf = (value: unknown): Started => {
  const started = jsonOf<{ run?: Record<string, unknown>; open_runs?: number }>(value);
  return started.run ? { run: runFromJson(started.run) } : { openRuns: started.open_runs! };
};

/**
 * A run and its user message in one statement (`loopd_start_run`), for
 * a conversation with no run waiting and a history that needs no repair:
 * `null` when it has one or may need one (nothing was written; take the
 * transaction of the general path), `{ openRuns }` when the tenant's cap
 * is reached. Runs started at the same moment go together
 * (`loopd_start_runs`, group commit: see `grouped`).
 */
export type RunStarter = Grouped<StartRun, Started>;

export function createRunStarter({ query, slots }: { query: RawQuery; slots: number }): RunStarter {
  const one = async (s: StartRun): Promise<Started> => {
    try {
      const [row] = await query({
        ...START,
        values: [pgSafeJson(startRunJson(s)), s.leaseMs, s.tenant, s.cap, s.messageId, pgSafeJson(s.content)],
      });
      return startedOf(row!.started);
    } catch (err) {
      if ((err as { code?: unknown }).code === "LD001") return null;
      throw err;
    }
  };
  // `loopd_start_runs` takes them in the order of their tenants, then of their conversations: the order of their locks.
  const many = async (starts: StartRun[]): Promise<Array<Started | Error>> => {
    const argument = jsonArgument<StartRun, Started>(starts, (s) =>
      pgSafeJson({
        run: startRunJson(s),
        lease_ms: s.leaseMs,
        tenant: s.tenant,
        cap: s.cap,
        message_id: s.messageId,
        content: s.content,
      }),
    );
    const [row] = await query({ ...START_MANY, values: [argument.json] });
    return argument.answer(
      jsonOf<Array<{ started: unknown } | ItemFailure>>(row!.results).map((r) =>
        !("code" in r) ? startedOf(r.started) : r.code === "LD001" ? null : itemFailed(r),
      ),
    );
  };
  return grouped<StartRun, Started>({ slots, one, many });
}
