import { z } from "zod";
import { blank, intFromEnv } from "../../util/env-values.js";

/** The variables of request bodies in time and in proportion (composed into config.ts's). */
export const bodyVariables = {
  /** How long a request (its headers and its whole body) may take to arrive; past it: 408 and the connection closed. */
  REQUEST_TIMEOUT_MS: intFromEnv(30_000, { min: 100, max: 3_600_000 }),
  /** Bytes of request bodies being received at once, in all; past it: 503 with Retry-After. */
  MAX_INFLIGHT_BODY_BYTES: intFromEnv(268_435_456, { min: 1024 }),
  /** The same bound for the bodies of one API key (with keys off, of every request); unset: a quarter of MAX_INFLIGHT_BODY_BYTES. */
  MAX_INFLIGHT_BODY_BYTES_PER_KEY: z.preprocess(
    (v) => (blank(v) ? undefined : Number(v)),
    z.number().int().min(1024).optional(),
  ),
  /** The most bytes (UTF-8) of text one message may hold, every text block together. */
  MAX_MESSAGE_TEXT_BYTES: intFromEnv(1_048_576, { min: 1024 }),
};

export function bodySettingsOf(e: z.output<z.ZodObject<typeof bodyVariables>>) {
  return {
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    /** Bodies being received at once, in bytes: in all, and of one key (a key may always have one body in flight, within `inflightBytes`). */
    inflightBytes: e.MAX_INFLIGHT_BODY_BYTES,
    inflightBytesPerKey: Math.min(
      e.MAX_INFLIGHT_BODY_BYTES_PER_KEY ?? Math.floor(e.MAX_INFLIGHT_BODY_BYTES / 4),
      e.MAX_INFLIGHT_BODY_BYTES,
    ),
    messageTextBytes: e.MAX_MESSAGE_TEXT_BYTES,
  };
}

export type BodySettings = ReturnType<typeof bodySettingsOf>;
