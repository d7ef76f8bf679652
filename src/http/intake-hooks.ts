import type { FastifyRequest } from "fastify";
import type { Intake } from "../runs/intake.js";

const takings = new WeakMap<FastifyRequest, () => void>();

/**
 * A route's hooks for requests that start runs: each is being taken
 * (`Intake`) from the moment its whole body is in until the handler says
 * `taken`, its answer is sent or the client goes away, whichever comes
 * first. Not from its arrival: a client trickling its body in would hold
 * every run's model calls for as long as it likes.
 */
export const intakeHooks = (intake: Intake) => ({
  preValidation: async (req: FastifyRequest) => void takings.set(req, intake.begin()),
  onResponse: async (req: FastifyRequest) => taken(req),
  onRequestAbort: async (req: FastifyRequest) => taken(req),
});

/** The request's run started, or it was refused: the runs already going may call their models again. */
export function taken(req: FastifyRequest): void {
  takings.get(req)?.();
  takings.delete(req);
}
