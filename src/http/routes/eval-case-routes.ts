import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { buildEvalCase } from "../../evals/build-eval-case.js";
import { evalCaseSchema } from "../../evals/eval-case.js";
import { redactorOf } from "../../util/redact.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { runParams } from "../schemas/runs.js";
import { errorResponses } from "../schemas/errors.js";

export function evalCaseRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services, conversations } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    "/conversations/:id/runs/:run_id/eval-case",
    {
      schema: {
        summary: "Make an eval case of a run",
        operationId: "getRunEvalCase",
        tags: ["runs"],
        description:
          "An eval case built from the run's trace, for `npm run eval`: the conversation's settings, the history before the run, the run's user message (`input`), the tool results it got (`recorded`), and expectations filled from what it did (`expect`), to edit.",
        params: runParams,
        response: {
          200: documented(evalCaseSchema, "The case, as `npm run eval` reads it from a file"),
          ...errorResponses,
        },
      },
    },
    async (req) => {
      const run = await conversations.run({ tenant: req.tenant, id: req.params.id, runId: req.params.run_id });
      const conversation = await conversations.get(req.tenant, req.params.id);
      return buildEvalCase({
        store: services.store,
        run,
        conversation,
        redactor: redactorOf(services.config),
        tenant: req.tenant,
      });
    },
  );
}
