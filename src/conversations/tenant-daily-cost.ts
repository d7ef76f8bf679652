import { AppError } from "../errors.js";
import { roundUsd } from "../core/usage.js";

/** How long a tenant's cost today is taken as read, unless a run of the tenant ended here meanwhile. */
export const TENANT_COST_TTL_MS = 5_000;

const DAY_MS = 86_400_000;

/**
 * `TENANT_DAILY_COST_USD`: a tenant whose runs started today (UTC) have
 * cost more than the limit gets `429 tenant_budget_exhausted` on new runs
 * until the next UTC day. The day's total is read from the runs (what
 * `GET /usage` shows) and kept per process: for `ttlMs`, until a run of the
 * tenant ends here (`forget`), and once past the limit until the day ends
 * (a day's cost does not go down). So a tenant may pass the limit by what
 * its runs already going spend, and, on another instance, by what runs
 * that end within `ttlMs` of its last read cost.
 */
export function createTenantDailyCost({
  limitUsd,
  costSince,
  now = Date.now,
  ttlMs = TENANT_COST_TTL_MS,
}: {
  /** Null: no limit, nothing is read. */
  limitUsd: number | null;
  costSince: (tenant: string, since: Date) => Promise<number>;
  now?: () => number;
  ttlMs?: number;
}) {
  const known = new Map<string, { dayStart: number; readAt: number; spent: number }>();

  async function spentToday(tenant: string, at: number): Promise<number> {
    const dayStart = at - (at % DAY_MS);
    const entry = known.get(tenant);
    if (entry && entry.dayStart === dayStart && (entry.spent > limitUsd! || at - entry.readAt < ttlMs))
      return entry.spent;
    const spent = await costSince(tenant, new Date(dayStart));
    // Entries of other days go as they are read again; the map holds one per tenant seen.
    known.set(tenant, { dayStart, readAt: at, spent });
    return spent;
  }

  return {
    /** Throws `tenant_budget_exhausted` when the tenant is past its daily limit; else what is left of its day (USD), null without a limit: a run admitted gets no more than that as its cost budget. */
    async check(tenant: string): Promise<number | null> {
      if (limitUsd === null) return null;
      const at = now();
      const spent = await spentToday(tenant, at);
      if (spent <= limitUsd) return limitUsd - spent;
      const retryAfterS = Math.ceil((DAY_MS - (at % DAY_MS)) / 1000);
      throw new AppError(
        "tenant_budget_exhausted",
        `tenant ${tenant} has spent $${roundUsd(spent)} today (UTC), more than TENANT_DAILY_COST_USD ($${limitUsd}); new runs are refused until 00:00 UTC, in ${retryAfterS} s`,
        { limit_usd: limitUsd, spent_usd: roundUsd(spent), retry_after_s: retryAfterS },
      );
    },
    /** A run of the tenant ended here: its cost is read afresh at the next check. */
    forget(tenant: string): void {
      known.delete(tenant);
    },
  };
}

export type TenantDailyCost = ReturnType<typeof createTenantDailyCost>;
