import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";

/** CORS for the configured origins only (none: no CORS headers at all); the headers a page's script may read. */
export async function useCors(app: FastifyInstance, origins: string[]): Promise<void> {
  if (origins.length === 0) return;
  await app.register(cors, {
    origin: origins,
    exposedHeaders: ["x-request-id", "retry-after", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"],
  });
}
