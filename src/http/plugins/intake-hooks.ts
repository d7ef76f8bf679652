import type { FastifyReply, FastifyRequest } from "fastify";
import type { Intake } from "../../runs/intake.js";

const takings = new WeakMap<FastifyRequest, () => void>();

/**
 * A route's hooks for requests that start runs: each is being taken
 * (`Intake`) from the moment its whole body is in (not from its arrival: a
 * client trickling its body in would hold every run's model calls for as
 * long as it likes) until the first of: the handler says `taken`, its answer
 * is decided (`onSend`: sent now, or queued behind an earlier answer on a
 * pipelining connection), or its connection closes (the client went away:
 * no answer is ever sent then). `startsRun`, for a route that answers other
 * requests too (a JSON-RPC endpoint): only the requests it picks, by their
 * parsed body, are taken first.
 */
export const intakeHooks = (intake: Intake, startsRun?: (req: FastifyRequest) => boolean) => ({
  preValidation: async (req: FastifyRequest, reply: FastifyReply) => {
    if (startsRun && !startsRun(req)) return;
    const taking = intake.begin();
    takings.set(req, taking);
    reply.raw.once("close", taking);
  },
  onSend: async (req: FastifyRequest, _reply: FastifyReply, payload: unknown) => {
    taken(req);
    return payload;
  },
});

/** The request's run started, or it was refused: the runs already going may call their models again. */
export function taken(req: FastifyRequest): void {
  takings.get(req)?.();
  takings.delete(req);
}
