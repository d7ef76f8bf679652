import type { FastifyInstance } from "fastify";

/** Small wrappers over `app.inject` so tests read as the API calls they make. */
export function api(app: FastifyInstance) {
  return {
    async createConversation(body: Record<string, unknown> = {}) {
      const res = await app.inject({ method: "POST", url: "/conversations", payload: body });
      if (res.statusCode !== 201) throw new Error(`create conversation: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    send(conversationId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
      return app.inject({ method: "POST", url: `/conversations/${conversationId}/messages`, payload: body, headers });
    },
    async history(conversationId: string) {
      const res = await app.inject({ method: "GET", url: `/conversations/${conversationId}/messages?limit=1000` });
      if (res.statusCode !== 200) throw new Error(`history: ${res.statusCode} ${res.body}`);
      return res.json().data as any[];
    },
  };
}
