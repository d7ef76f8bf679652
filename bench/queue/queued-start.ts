import type { FakeLlm } from "../../test/support/fake-llm/server.js";
import { summarize, type Stats } from "../lib/measure.js";

export interface QueuedStartRow {
  /** The run ahead's model request → the next run's, the next run enqueued while the one ahead ran (loopd starts it). */
  queued: Stats;
  /** The same, the client waiting for the run ahead's answer and then sending the next message (reject, as before). */
  chained: Stats;
}

/** How long the fake takes to answer the run ahead: long enough to queue the next message behind it. */
const AHEAD_MS = 50;

/**
 * queue: What starting an enqueued run costs against a client that chains its
 * messages itself: on a fresh conversation each time, a run whose model
 * answers after AHEAD_MS, then a second run — once enqueued while the first
 * runs (`on_busy: "enqueue"`, `wait: false`: loopd starts it when the first
 * ends), once sent by the client as soon as the first's answer arrives.
 * Timed where the fake sees the two model requests arrive; interleaved.
 */
export async function measureQueuedStart({
  llm,
  loopdUrl,
  samples,
}: {
  llm: FakeLlm;
  loopdUrl: string;
  samples: number;
}): Promise<QueuedStartRow> {
  let arrivals: number[] = [];
  llm.respond = () => {
    arrivals.push(performance.now());
    return arrivals.length === 1 ? { text: "first", chunkDelayMs: AHEAD_MS } : { text: "second" };
  };
  const post = async (path: string, body: unknown, status = 200) => {
    const res = await fetch(`${loopdUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    if (res.status !== status) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const newConversation = async () => (await post("/conversations", {}, 201)).id as string;
  const secondArrived = async () => {
    while (arrivals.length < 2) await new Promise((r) => setTimeout(r, 1));
  };
  const waitEnd = async (conv: string, runId: string) => {
    for (;;) {
      const run = (await (await fetch(`${loopdUrl}/conversations/${conv}/runs/${runId}`)).json()) as { status: string };
      if (run.status === "completed") return;
      if (run.status !== "queued" && run.status !== "running") throw new Error(`queued run ended ${run.status}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  const queued: number[] = [];
  const chained: number[] = [];
  const warmup = 10;
  for (let i = 0; i < samples + warmup; i++) {
    arrivals = [];
    const q = await newConversation();
    const ahead = post(`/conversations/${q}/messages`, { content: "one" });
    while (arrivals.length < 1) await new Promise((r) => setTimeout(r, 1));
    const next = await post(`/conversations/${q}/messages`, { content: "two", on_busy: "enqueue", wait: false }, 202);
    if (next.run.status !== "queued") throw new Error(`expected a queued run, got ${next.run.status}`);
    await ahead;
    await secondArrived();
    await waitEnd(q, next.run.id);
    if (i >= warmup) queued.push(arrivals[1]! - arrivals[0]!);

    arrivals = [];
    const c = await newConversation();
    await post(`/conversations/${c}/messages`, { content: "one" });
    await post(`/conversations/${c}/messages`, { content: "two" });
    if (i >= warmup) chained.push(arrivals[1]! - arrivals[0]!);
  }
  llm.respond = null;
  return { queued: summarize(queued, 1), chained: summarize(chained, 1) };
}
