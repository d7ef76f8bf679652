import type { FastifyInstance } from "fastify";
import type { TestLoopd } from "../support/helpers/start-loopd.js";

/** Requests of one tenant's key to one instance. */
export function client(loopd: TestLoopd, key: string) {
  const headers = { authorization: `Bearer ${key}` };
  const app: FastifyInstance = loopd.app;
  return {
    app,
    headers,
    inject: (method: "GET" | "POST" | "PATCH", url: string, payload?: Record<string, unknown>) =>
      app.inject({ method, url, headers, ...(payload && { payload }) }),
    async conversation(body: Record<string, unknown>): Promise<string> {
      const res = await app.inject({ method: "POST", url: "/conversations", headers, payload: body });
      if (res.statusCode !== 201) throw new Error(`create conversation: ${res.statusCode} ${res.body}`);
      return res.json().id as string;
    },
    /** Reads the run until it has one of `statuses` (at most `timeoutMs`): there is no event to await on another instance's run. */
    async until(conversationId: string, runId: string, statuses: string[], timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await app.inject({ method: "GET", url: `/conversations/${conversationId}/runs/${runId}`, headers });
        const run = res.json();
        if (statuses.includes(run.status)) return run;
        if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status}, not ${statuses.join(" or ")}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/** A key of a tenant of its own (so one test's requests never count against another's limits). */
export async function keyOf(loopd: TestLoopd, tenant: string): Promise<string> {
  return (await loopd.services.store.keys.create({ tenant, name: null })).key;
}
