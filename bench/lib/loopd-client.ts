/** The few loopd calls the benchmark makes, over real HTTP. */
export function loopdClient(baseUrl: string) {
  async function json(method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text);
  }
  return {
    async createConversation(): Promise<string> {
      return (await json("POST", "/conversations", {})).id as string;
    },
    /** One non-streaming run; throws unless it completed. */
    async send(conversationId: string, content: string, { maxSteps }: { maxSteps?: number } = {}): Promise<any> {
      const body = await json("POST", `/conversations/${conversationId}/messages`, {
        content,
        ...(maxSteps && { max_steps: maxSteps }),
      });
      if (body.run.status !== "completed")
        throw new Error(`run ${body.run.id} ended ${body.run.status}: ${JSON.stringify(body.run.error)}`);
      return body;
    },
    async messageCount(conversationId: string): Promise<number> {
      return (await json("GET", `/conversations/${conversationId}`)).message_count as number;
    },
  };
}

export type LoopdClient = ReturnType<typeof loopdClient>;
