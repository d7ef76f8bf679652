import { expect } from "vitest";
import { sleep } from "./loopd-process.js";
import { openSse, type SseEvent } from "./sse-reader.js";

const ACTIVE = new Set(["queued", "running"]);
const TERMINAL = new Set(["run.completed", "run.incomplete", "run.failed", "run.cancelled", "run.requires_action"]);

/**
 * The HTTP calls the process tests make, over a real socket. `baseUrl` is a
 * getter because the process behind it changes on every restart.
 */
export function loopdClient(baseUrl: () => string) {
  // `any`: tests read the contract's JSON shapes field by field.
  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      ...(body !== undefined && { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }
  async function ok(method: string, path: string, body?: unknown, status = 200): Promise<any> {
    const res = await call(method, path, body);
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  return {
    createConversation: (body: Record<string, unknown>) => ok("POST", "/conversations", body, 201),
    /** A non-streaming send: answers when the run has ended. */
    send: (conversationId: string, content: string) =>
      ok("POST", `/conversations/${conversationId}/messages`, { content }),
    /** A streaming send. */
    sendStreaming: (conversationId: string, content: string, extra: Record<string, unknown> = {}) =>
      openSse(`${baseUrl()}/conversations/${conversationId}/messages`, {
        method: "POST",
        body: { content, stream: true, ...extra },
      }),
    run: (conversationId: string, runId: string) => ok("GET", `/conversations/${conversationId}/runs/${runId}`),
    /** The conversation's runs (the first page). */
    runs: async (conversationId: string): Promise<any[]> =>
      (await ok("GET", `/conversations/${conversationId}/runs`)).data,
    /** Answers a paused run (non-streaming): resolves when the run ends or pauses again. */
    answer: (conversationId: string, runId: string, body: Record<string, unknown>) =>
      ok("POST", `/conversations/${conversationId}/runs/${runId}/actions`, body),
    messages: async (conversationId: string): Promise<any[]> =>
      (await ok("GET", `/conversations/${conversationId}/messages?limit=1000`)).data,

    /** Polls the run until it leaves queued/running. */
    async waitForRunEnd(conversationId: string, runId: string, timeoutMs: number): Promise<any> {
      const deadline = Date.now() + timeoutMs;
      let run: any;
      while (Date.now() < deadline) {
        run = await ok("GET", `/conversations/${conversationId}/runs/${runId}`);
        if (!ACTIVE.has(run.status)) return run;
        await sleep(100);
      }
      throw new Error(`run ${runId} still ${run?.status} after ${timeoutMs} ms`);
    },

    /** The whole event log through `GET …/events`; the stream must end by itself. */
    async allEvents(conversationId: string, runId: string): Promise<SseEvent[]> {
      const stream = await openSse(`${baseUrl()}/conversations/${conversationId}/runs/${runId}/events`);
      expect(stream.status).toBe(200);
      expect(await stream.rest(10_000)).toEqual({ kind: "ended" });
      return stream.events;
    },
  };
}

/**
 * A complete event log: ids 1, 2, 3 … with no gaps, `run.created` first, and
 * exactly one terminal event, the last. Returns the terminal event.
 */
export function expectCompleteEventLog(events: SseEvent[]): SseEvent {
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  expect(events[0]?.event).toBe("run.created");
  // One end, the last event; a pause answered since (run.requires_action) is not an end.
  expect(events.filter((e) => TERMINAL.has(e.event) && e.event !== "run.requires_action").map((e) => e.id)).toEqual([
    events.length,
  ]);
  return events.at(-1)!;
}

export const isTerminalEvent = (e: SseEvent) => TERMINAL.has(e.event);

/** Tool calls of the history that no tool message answers: must always be none. */
export function unansweredToolCalls(history: any[]): string[] {
  const answered = new Set(history.filter((m) => m.role === "tool").map((m) => m.content[0].tool_call_id));
  return history
    .flatMap((m) => m.content.filter((b: any) => b.type === "tool_call").map((b: any) => b.id as string))
    .filter((id) => !answered.has(id));
}
