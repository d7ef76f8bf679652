import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { AppError } from "../../errors.js";
import { compactBody } from "../../openai-api/responses/compact-body.js";
import { compactResponse } from "../../openai-api/responses/compact-response.js";
import { linkedAbort } from "../../util/linked-abort.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { messageBodyLimit } from "../plugins/message-body-limit.js";
import { openAiErrorResponses } from "./openai-response-routes.js";

const compactResource = z
  .object({
    id: z.string(),
    object: z.literal("response.compaction"),
    created_at: z.number().int(),
    output: z.array(z.record(z.string(), z.unknown())),
    usage: z.record(z.string(), z.unknown()),
  })
  .describe("The Open Responses specification's `CompactResource`");

/**
 * `POST /v1/responses/compact` (src/openai-api/responses/compact-response.ts).
 * A tenant's compactions in flight on this process are at most
 * `MAX_ACTIVE_RUNS_PER_TENANT`, as its runs are: each holds a model call.
 */
export function openAiCompactRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services } = deps;
  const inFlight = new Map<string, number>();
  const hold = (tenant: string) => {
    const cap = services.config.runs.maxActivePerTenant;
    const held = inFlight.get(tenant) ?? 0;
    if (cap > 0 && held >= cap)
      throw new AppError(
        "too_many_runs",
        `tenant ${tenant} has ${held} compactions under way here, the most MAX_ACTIVE_RUNS_PER_TENANT (${cap}) allows; try again when one ends`,
        { active_runs: held },
      );
    inFlight.set(tenant, held + 1);
    return () => {
      const left = (inFlight.get(tenant) ?? 1) - 1;
      if (left === 0) inFlight.delete(tenant);
      else inFlight.set(tenant, left);
    };
  };

  app.withTypeProvider<ZodTypeProvider>().post(
    "/v1/responses/compact",
    {
      bodyLimit: messageBodyLimit(services.config),
      schema: {
        summary: "Compact a conversation (OpenAI's Responses API)",
        description:
          "Condenses `input` (and the history up to `previous_response_id`) into one `compaction` item: loopd's summary of it, written by one model call and sealed for the caller's tenant (`encrypted_content`, opaque). A later `POST /v1/responses` whose `input` carries that item goes on from the summary. The call's tokens count in `GET /usage` as a run's.",
        operationId: "compactOpenAiResponse",
        tags: ["OpenAI-compatible API"],
        body: compactBody,
        response: { 200: documented(compactResource, "The compaction"), ...openAiErrorResponses },
      },
    },
    async (req, reply) => {
      const release = hold(req.tenant);
      const gone = new AbortController();
      reply.raw.once("close", () => gone.abort());
      const stop = linkedAbort(gone.signal, deps.shutdown);
      try {
        return await compactResponse(deps, { tenant: req.tenant, body: req.body, signal: stop.signal });
      } finally {
        stop.dispose();
        release();
      }
    },
  );
}
