import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { AppError } from "../../errors.js";
import type { HttpDeps } from "../http-deps.js";
import { documented } from "../openapi.js";
import { requestErrorResponses } from "../schemas/errors.js";

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const day = () =>
  z
    .string()
    .regex(DAY, "must be a day, YYYY-MM-DD")
    .refine(
      (d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
      "must be a day that exists",
    )
    .refine((d) => Number(d.slice(0, 4)) >= 1970, "must be in 1970 or later");
const MAX_DAYS = 366;
const usageRow = z.object({
  day: z.string(),
  provider: z.string(),
  model: z.string(),
  runs: z.number().int(),
  steps: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_read_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
  cost_usd: z.number().nullable(),
  /** With `group_by=agent`: the agent version the runs ran with (null: none). */
  agent: z.string().nullable().optional(),
  agent_version: z.number().int().nullable().optional(),
});
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function usageRoutes(app: FastifyInstance, { services: { store } }: HttpDeps) {
  app.withTypeProvider<ZodTypeProvider>().get(
    "/usage",
    {
      schema: {
        summary: "Usage and cost",
        description: `What the caller's tenant used, from the usage and cost its runs recorded, by UTC day (of the run's start), provider and model (and agent version, with \`group_by=agent\`). \`from\` and \`to\` are days (YYYY-MM-DD), both included; by default the last 30 days; at most ${MAX_DAYS} days.`,
        operationId: "getUsage",
        tags: ["usage"],
        querystring: z.strictObject({
          from: day().optional(),
          to: day().optional(),
          group_by: z
            .enum(["agent"])
            .optional()
            .describe(
              "`agent`: each row is also one agent version's (`agent`, `agent_version`; null for runs without one)",
            ),
        }),
        response: {
          200: documented(z.object({ data: z.array(usageRow) }), "The tenant's use, day by day", {
            data: [
              {
                day: "2026-12-01",
                provider: "anthropic",
                model: "claude-sonnet-4-5",
                runs: 12,
                steps: 31,
                input_tokens: 48120,
                output_tokens: 2210,
                cache_read_tokens: 30100,
                cache_write_tokens: 4200,
                cost_usd: 0.1743,
              },
            ],
          }),
          ...requestErrorResponses,
        },
      },
    },
    async (req) => {
      const to = req.query.to ?? isoDay(Date.now());
      const from = req.query.from ?? isoDay(Date.parse(`${to}T00:00:00Z`) - 29 * 86_400_000);
      const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
      if (days < 1)
        throw new AppError("invalid_request", `from (${from}) is after to (${to})`, { field: "querystring.from" });
      if (days > MAX_DAYS)
        throw new AppError("invalid_request", `from ${from} to ${to} is ${days} days; at most ${MAX_DAYS} at a time`, {
          field: "querystring.from",
        });
      return { data: await store.usage.byDay(req.tenant, { from, to, byAgent: req.query.group_by === "agent" }) };
    },
  );
}
