import type { FakeLlm } from "../../test/support/fake-llm/server.js";
import { summarize, type Stats } from "../lib/measure.js";

export interface PauseAnswerRow {
  /** First model request → the next one, through a tool round trip that nobody holds up. */
  toolRoundTrip: Stats;
  /** Answer POST sent → the next model request, through a pause approved by the client. */
  answerToRequest: Stats;
}

/**
 * pause: What a pause costs the loop once answered: the same step (the model
 * calls `calculate`, then answers), once run straight through and once
 * paused for approval and approved. Times are taken where the fake model
 * sees each request arrive, so both exclude the run's start and end.
 */
export async function measurePauseAnswer({
  llm,
  loopdUrl,
  samples,
}: {
  llm: FakeLlm;
  loopdUrl: string;
  samples: number;
}): Promise<PauseAnswerRow> {
  let arrivals: number[] = [];
  llm.respond = (req) => {
    arrivals.push(performance.now());
    const last = (req.body.messages as { role: string }[]).at(-1);
    return last?.role === "tool"
      ? { text: "42." }
      : { toolCalls: [{ name: "calculate", input: { expression: "6*7" } }] };
  };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${loopdUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const newConversation = async (extra: Record<string, unknown>) => (await post("/conversations", extra)).id as string;

  const straight: number[] = [];
  const answered: number[] = [];
  // Interleaved, so both see the same machine; the first few of each warm up.
  const warmup = 10;
  for (let i = 0; i < samples + warmup; i++) {
    arrivals = [];
    const free = await newConversation({});
    const plain = await post(`/conversations/${free}/messages`, { content: "6*7?" });
    if (plain.run.status !== "completed" || arrivals.length !== 2)
      throw new Error(`tool round trip ended ${plain.run.status}`);
    if (i >= warmup) straight.push(arrivals[1]! - arrivals[0]!);

    arrivals = [];
    const careful = await newConversation({ approval_required: ["calculate"] });
    const paused = await post(`/conversations/${careful}/messages`, { content: "6*7?" });
    if (paused.run.status !== "requires_action") throw new Error(`expected a pause, got ${paused.run.status}`);
    const [call] = paused.run.required_action.tool_calls;
    const sent = performance.now();
    const done = await post(`/conversations/${careful}/runs/${paused.run.id}/actions`, {
      approvals: [{ tool_call_id: call.tool_call_id, approve: true }],
    });
    if (done.run.status !== "completed" || arrivals.length !== 2)
      throw new Error(`answered run ended ${done.run.status}`);
    if (i >= warmup) answered.push(arrivals[1]! - sent);
  }
  llm.respond = null;
  return { toolRoundTrip: summarize(straight, 1), answerToRequest: summarize(answered, 1) };
}
