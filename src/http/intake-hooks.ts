import type { FastifyRequest } from "fastify";
import type { Intake } from "../runs/intake.js";

const takings = new WeakMap<FastifyRequest, () => void>();

/**
 * A route's hooks for requests that start runs: each is being taken
 * (`Intake`) from its arrival, before its body is read, until the handler
 * says `taken` or its answer is sent or the client goes away, whichever
 * comes first.
 */
export const intakeHooks = (intake: Intake) => ({
  onRequest: async (req: FastifyRequest) => void takings.set(req, intake.begin()),
  onResponse: async (req: FastifyRequest) => taken(req),
  onRequestAbort: async (req: FastifyRequest) => taken(req),
});

/** The request's run started, or it was refused: the runs already going may call their models again. */
export function taken(req: FastifyRequest): void {
  takings.get(req)?.();
  takings.delete(req);
}
