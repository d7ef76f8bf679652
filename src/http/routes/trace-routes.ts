import { Readable } from "node:stream";
import { documented } from "../openapi.js";
import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { presentRun } from "../../conversations/present.js";
import { readTrace } from "../../runs/trace/read-trace.js";
import { redactorOf } from "../../util/redact.js";
import type { HttpDeps } from "../http-deps.js";
import { runParams } from "../schemas/runs.js";
import { errorResponses } from "../schemas/errors.js";
import { traceQuery, traceResponse } from "../schemas/traces.js";
import { evalCaseRoutes } from "./eval-case-routes.js";

const NDJSON = "application/x-ndjson";

export function traceRoutes(app: FastifyInstance, deps: HttpDeps) {
  const { services, conversations } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    "/conversations/:id/runs/:run_id/trace",
    {
      schema: {
        summary: "Read a run's trace",
        operationId: "getRunTrace",
        tags: ["runs"],
        description: `A run's trace: each model call (what it was sent, what it answered, latency, usage), each tool call, notice, answer and the run's end. With \`Accept: ${NDJSON}\`, one JSON object per line (the run first), streamed from the database.`,
        params: runParams,
        querystring: traceQuery,
        response: {
          200: documented(
            traceResponse,
            "The run and its spans, in order (`?expand=requests`: each model call's request whole, as the provider received it)",
          ),
          ...errorResponses,
        },
      },
    },
    async (req, reply) => {
      const run = await conversations.run({ tenant: req.tenant, id: req.params.id, runId: req.params.run_id });
      const spans = readTrace({
        store: services.store,
        providers: services.providers,
        run,
        tenant: req.tenant,
        redactor: redactorOf(services.config),
        expandRequests: req.query.expand === "requests",
      });
      // Both forms are streamed, a span at a time as the client reads (memory stays flat however long the run,
      // requests expanded or not), and each span is written as it was read: one presentation for both.
      const ndjson = req.headers.accept?.includes(NDJSON) ?? false;
      async function* json() {
        yield `{"run":${JSON.stringify(presentRun(run))},"spans":[`;
        let first = true;
        for await (const span of spans) {
          yield `${first ? "" : ","}${JSON.stringify(span)}`;
          first = false;
        }
        yield "]}";
      }
      async function* lines() {
        yield `${JSON.stringify({ type: "run", run: presentRun(run) })}\n`;
        for await (const span of spans) yield `${JSON.stringify(span)}\n`;
      }
      // A stream is sent as it is, not through the response schema (which documents its shape).
      return reply
        .type(ndjson ? NDJSON : "application/json; charset=utf-8")
        .send(Readable.from(ndjson ? lines() : json()) as never);
    },
  );
  // A case for `npm run eval` is made of a run's trace too.
  evalCaseRoutes(app, deps);
}
