import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { replyError } from "./error-handler.js";

/**
 * Answers a request no route takes: 405 with `Allow` when the path is a
 * route's but the method is not, 404 otherwise. Call before the routes are
 * added: it learns each route's path and methods as they are.
 */
export function useNotFoundHandler(app: FastifyInstance): void {
  const routes: Array<{ path: RegExp; method: string }> = [];
  app.addHook("onRoute", ({ url, method }) => {
    const segments = url
      .split("/")
      .map((s) => (s.startsWith(":") ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
    const path = new RegExp(`^${segments.join("/")}$`);
    for (const m of [method].flat()) routes.push({ path, method: m });
  });
  const answer = (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split("?")[0]!;
    const allowed = [...new Set(routes.filter((r) => r.path.test(path)).map((r) => r.method))];
    if (allowed.length === 0) return replyError(reply, "not_found", `no route ${req.method} ${path}`);
    reply.header("allow", allowed.join(", "));
    return replyError(
      reply,
      "method_not_allowed",
      `${req.method} is not allowed on ${path}; it takes ${allowed.join(", ")}`,
      { allowed },
    );
  };
  // Before the body is read: a wrong method or path is the answer, whatever the body holds.
  app.addHook("onRequest", async (req, reply) => {
    if (req.is404) return answer(req, reply);
  });
  app.setNotFoundHandler(answer);
}
