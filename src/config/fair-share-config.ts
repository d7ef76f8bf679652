import { z } from "zod";
import { blank, intFromEnv } from "../util/env-values.js";

/** The variables of tenants' fair shares of streams and webhook deliveries (composed into config.ts's). */
export const fairShareVariables = {
  /** Open streams one tenant may hold on a server; unset: a tenth of `MAX_STREAMS`. */
  MAX_STREAMS_PER_TENANT: z.preprocess((v) => (blank(v) ? undefined : Number(v)), z.number().int().min(1).optional()),
  /** Webhook tries in flight at once to one receiver host (host and port), per instance. */
  WEBHOOK_MAX_INFLIGHT_PER_HOST: intFromEnv(2, { max: 64 }),
  /** DNS servers (`ip` or `ip:port`, comma-separated) webhook names are resolved with; unset: the system's. */
  WEBHOOK_DNS_SERVERS: z.preprocess(
    (v) => (blank(v) ? "" : v),
    z
      .string()
      .transform((s) =>
        s
          .split(",")
          .map((a) => a.trim())
          .filter(Boolean),
      )
      .pipe(
        z.array(
          z
            .string()
            .regex(
              /^(\[[0-9a-fA-F:.]+\](:\d{1,5})?|[0-9a-fA-F:.]+)$/,
              "must be IP addresses (with an optional :port) separated by commas",
            ),
        ),
      ),
  ),
};

type FairShareVariables = z.output<z.ZodObject<typeof fairShareVariables>>;

export function fairSharesOf(e: FairShareVariables & { MAX_STREAMS: number }) {
  return {
    /** Open streams one tenant holds at most, on every instance together (see `createStreamShare`); past it a new one is `429 too_many_streams`. */
    maxStreamsPerTenant: e.MAX_STREAMS_PER_TENANT ?? Math.max(1, Math.floor(e.MAX_STREAMS / 10)),
    webhookMaxInflightPerHost: e.WEBHOOK_MAX_INFLIGHT_PER_HOST,
    /** Empty: the servers of the system's resolver configuration. */
    webhookDnsServers: e.WEBHOOK_DNS_SERVERS,
  };
}

export type FairShares = ReturnType<typeof fairSharesOf>;
