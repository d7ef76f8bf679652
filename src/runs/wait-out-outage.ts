import type { RunOutcome } from "../core/run-outcome.js";
import type { RunRow } from "../store/schema.js";

/** The longest wait between two probes, as a multiple of `MODEL_COOLDOWN_MS`. */
export const MAX_PROBE_BACKOFF = 16;

/** The outage a run was already waiting out when it started here: since when, and how many times it parked in it. */
export interface CarriedOutage {
  since: Date;
  probes: number;
}

/** The outage a run's row says it waits out (null: none, or a model answered since). */
export const carriedOutageOf = (run: Pick<RunRow, "outageSince" | "outageProbes">): CarriedOutage | null =>
  run.outageSince ? { since: run.outageSince, probes: run.outageProbes } : null;

/**
 * What a run whose every model is down does: with `on_provider_outage:
 * "wait"`, it parks in `waiting` instead of failing, to be probed after a
 * backoff (`MODEL_COOLDOWN_MS`, doubling with each probe of the outage, at
 * most `MAX_PROBE_BACKOFF` times it), until its give-up time: the end of
 * `max_seconds` (the run's clock: waiting counts against it), else
 * `MODEL_OUTAGE_MAX_WAIT_S` after it first parked. Past that it fails as
 * without the wait. Any other outcome is returned as it is.
 */
export function waitOutOutage(
  outcome: RunOutcome,
  {
    run,
    carried,
    cooldownMs,
    maxWaitS,
    now = Date.now(),
  }: {
    run: Pick<RunRow, "request" | "createdAt" | "pausedMs">;
    /** The outage the run was waiting out when it started here; null when a model answered since. */
    carried: CarriedOutage | null;
    cooldownMs: number;
    maxWaitS: number;
    now?: number;
  },
): RunOutcome {
  if (outcome.status !== "failed" || outcome.error.code !== "provider_unavailable") return outcome;
  if (run.request.on_provider_outage !== "wait") return outcome;
  const since = carried?.since.getTime() ?? now;
  const probes = (carried?.probes ?? 0) + 1;
  const maxSeconds = run.request.budget?.max_seconds ?? null;
  const giveUpAt =
    maxSeconds !== null ? run.createdAt.getTime() + run.pausedMs + maxSeconds * 1000 : since + maxWaitS * 1000;
  if (now >= giveUpAt) return outcome;
  const backoff = cooldownMs * Math.min(2 ** (probes - 1), MAX_PROBE_BACKOFF);
  const { status: _status, stopReason: _stopReason, error, ...spent } = outcome;
  return {
    ...spent,
    status: "waiting",
    stopReason: null,
    error,
    outage: {
      wakeInMs: Math.min(backoff, giveUpAt - now),
      giveUpInMs: giveUpAt - now,
      since: carried ? carried.since.toISOString() : null,
      probes,
    },
  };
}
