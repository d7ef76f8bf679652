import OpenAI from "openai";
import { isEvent, readSse } from "../../test/support/helpers/sse-client.js";
import type { RecordedRequest, FakeTurn } from "../../test/support/fake-llm/server.js";
import { SCENARIOS, type Scenario } from "../lib/run-shapes.js";

export const RESPONSE_SUBJECTS = ["messages", "responses", "openai sdk"] as const;
export type ResponseSubject = (typeof RESPONSE_SUBJECTS)[number];

/** The model the default configuration runs (the openai provider's default), named by the responses: the same model calls. */
export const MODEL = "gpt-4o-mini";

/** One streaming run as its client saw it: ms to its first and last events, and why it failed if it did not complete. */
export interface StreamedRun {
  ttfe: number | null;
  ttle: number | null;
  failure: string | null;
}

/**
 * The fake model's answers for both shapes at once: `tool` asks for
 * `calculate` and then answers its result; `text` answers at once. Told
 * apart by the user's prompt, so both shapes can share one fake.
 */
export function respondToShapes(req: RecordedRequest): FakeTurn {
  const messages = req.body.messages as Array<{ role: string; content: unknown }>;
  const asked = JSON.stringify(messages.findLast((m) => m.role === "user")?.content ?? "");
  return asked.includes(SCENARIOS.tool.prompt) ? SCENARIOS.tool.respond(req) : SCENARIOS.text.respond(req);
}

/** Times a refused run (`503`, the overload guard) is sent again, after its `Retry-After`, before it counts as failed. */
export const MAX_RETRIES = 10;

/**
 * The three ways a client streams the same run on a new conversation:
 * messages: `POST /conversations` then `POST …/messages` with `stream: true`
 * (timed together: the responses make their conversation inside their one
 * request); responses: `POST /v1/responses` with `stream: true`, read with
 * fetch as the messages are; openai sdk: the official client's
 * `responses.stream`, which also folds the events into the response. A
 * refusal (`503` with `Retry-After`) is sent again after the wait it asks
 * for, as the openai client does by itself; `retries()` counts them all.
 */
export function responseCallers(url: string) {
  let retries = 0;
  const counted: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (res.status === 503) retries++;
    return res;
  };
  /** POSTs until the answer is not a refusal, or MAX_RETRIES refusals. */
  const send = async (at: string, body: unknown): Promise<Response> => {
    for (let attempt = 0; ; attempt++) {
      const res = await post(counted, url, at, body);
      if (res.status !== 503 || attempt === MAX_RETRIES) return res;
      await res.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get("retry-after") ?? 1) * 1000));
    }
  };
  const sdk = new OpenAI({ apiKey: "bench", baseURL: `${url}/v1`, maxRetries: MAX_RETRIES, fetch: counted });
  const run: Record<ResponseSubject, (shape: Scenario) => Promise<StreamedRun>> = {
    messages: (shape) =>
      timed(async (seen) => {
        const created = await post(fetch, url, "/conversations", {});
        if (created.status !== 200 && created.status !== 201) return failureOf(created);
        const { id } = (await created.json()) as { id: string };
        const res = await send(`/conversations/${id}/messages`, { content: SCENARIOS[shape].prompt, stream: true });
        if (res.status !== 200) return failureOf(res);
        return endOf(res, seen, "run.completed");
      }),
    responses: (shape) =>
      timed(async (seen) => {
        const res = await send("/v1/responses", { model: MODEL, input: SCENARIOS[shape].prompt, stream: true });
        if (res.status !== 200) return failureOf(res);
        return endOf(res, seen, "response.completed");
      }),
    "openai sdk": (shape) =>
      timed(async (seen) => {
        let last = "none";
        for await (const event of sdk.responses.stream({ model: MODEL, input: SCENARIOS[shape].prompt })) {
          seen();
          last = event.type;
        }
        return last === "response.completed" ? null : last;
      }),
  };
  return { run, retries: () => retries };
}

/** Runs `read` with a clock: `seen()` marks each event's arrival; it returns the failure, or null. */
async function timed(read: (seen: () => void) => Promise<string | null>): Promise<StreamedRun> {
  const started = performance.now();
  let ttfe: number | null = null;
  let ttle: number | null = null;
  const seen = () => {
    ttle = performance.now() - started;
    ttfe ??= ttle;
  };
  try {
    const failure = await read(seen);
    return { ttfe, ttle, failure };
  } catch (error) {
    return { ttfe, ttle, failure: errorCode(error) };
  }
}

async function endOf(res: Response, seen: () => void, completed: string): Promise<string | null> {
  let last = "none";
  for await (const item of readSse(res)) {
    if (!isEvent(item)) continue;
    seen();
    last = item.event;
  }
  return last === completed ? null : last;
}

function post(fetch: typeof globalThis.fetch, url: string, at: string, body: unknown): Promise<Response> {
  return fetch(`${url}${at}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The status and the error's code (loopd's shape or OpenAI's), and loopd's reason for a 503 (`overloaded`, `database_busy`). */
async function failureOf(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as {
    error?: { code?: string | null; details?: { reason?: string } };
  } | null;
  return [res.status, body?.error?.code, body?.error?.details?.reason].filter(Boolean).join(" ");
}

function errorCode(error: unknown): string {
  const { status, code } = error as { status?: unknown; code?: unknown };
  if (typeof status === "number") return typeof code === "string" ? `${status} ${code}` : String(status);
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === "string" ? cause.code : String(error);
}
