import underPressure from "@fastify/under-pressure";
import type { FastifyInstance } from "fastify";
import { AppError } from "../errors.js";
import { RETRY_AFTER_S } from "./error-handler.js";

/** What an overloaded process answers: raised by the guard before the request is read, answered by the error handler. */
export class Overloaded extends AppError {
  constructor() {
    super("unavailable", "the server is overloaded; try again shortly", { reason: "event_loop_delay" });
  }
}

export interface OverloadGuardOptions {
  /** Mean event-loop lag, in ms, above which every request, /healthz too, is refused; 0 turns the guard off. */
  maxEventLoopDelayMs: number;
  /** How often the lag is measured (and so how long a refusal lasts at least). @default 1000 */
  sampleIntervalMs?: number;
}

/**
 * A process whose event loop lags is answered 503 with Retry-After at once,
 * instead of taking on requests it would answer too late or never.
 */
export async function useOverloadGuard(app: FastifyInstance, { maxEventLoopDelayMs, sampleIntervalMs = 1_000 }: OverloadGuardOptions) {
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    sampleInterval: sampleIntervalMs,
    retryAfter: RETRY_AFTER_S,
    customError: Overloaded,
  });
}
