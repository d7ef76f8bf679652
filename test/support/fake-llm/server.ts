import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { FakeTurn } from "./fake-turn.js";
import { isJsonObject, type JsonObject } from "./json-object.js";
import { createPromptCache, type CountedInput } from "./prompt-cache.js";
import { sendError, sendTurn } from "./send-turn.js";
import type { WireApi } from "./wire-api.js";
import { wireApiFor } from "./wire-apis.js";

export type { FakeStop, FakeToolCall, FakeTurn } from "./fake-turn.js";

export interface RecordedRequest {
  api: "anthropic" | "openai";
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body; the raw text when it was not JSON. `any` because tests dig into arbitrary request shapes. */
  body: any;
  stream: boolean;
  /** How its input tokens were billed (prompt cache reads and writes apart); absent when it was refused. */
  counted?: CountedInput;
}

export interface FakeLlm {
  /** `http://127.0.0.1:<port>`: Anthropic's baseURL; OpenAI's is `${url}/v1`. */
  url: string;
  /** Append turns to the FIFO queue shared by both APIs. */
  script(...turns: FakeTurn[]): void;
  /** Answers when the queue is empty. */
  respond: ((req: RecordedRequest) => FakeTurn) | null;
  /** Every LLM request received, in order, including the ones answered with an error. */
  requests: RecordedRequest[];
  pending(): number;
  /** Clear the queue, the recorded requests and `respond`. */
  reset(): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

/**
 * A wire-level fake of the Anthropic Messages and OpenAI Chat Completions
 * APIs: the real SDKs talk to it over HTTP, it answers with scripted turns,
 * and it rejects broken histories exactly as the real APIs do.
 */
export async function startFakeLlm({
  port = 0,
  chunkDelayMs = 0,
}: { port?: number; chunkDelayMs?: number } = {}): Promise<FakeLlm> {
  const queue: FakeTurn[] = [];
  const requests: RecordedRequest[] = [];
  /**
   * The user texts Anthropic refused: as documented, it keeps refusing every
   * later request whose context still holds a refused turn.
   */
  const refusedTriggers = new Set<string>();
  const sockets = new Set<Socket>();
  const requestsInFlight = new Set<AbortController>();
  const promptCache = createPromptCache();

  async function answerLlm(api: WireApi, path: string, req: IncomingMessage, res: ServerResponse, signal: AbortSignal) {
    const text = await readBody(req);
    const parsed = parseJson(text);
    const body = parsed.ok ? parsed.value : text;
    const recorded: RecordedRequest = {
      api: api.name,
      path,
      headers: { ...req.headers },
      body,
      stream: isJsonObject(body) && body.stream === true,
    };
    requests.push(recorded);
    const problem = parsed.ok ? api.validate(body) : { message: "There was an error parsing the body: invalid JSON" };
    if (problem !== null) return sendError({ api, res, status: 400, error: problem });
    const counted =
      api.name === "anthropic" ? promptCache.anthropic(body as JsonObject) : promptCache.openai(body as JsonObject);
    recorded.counted = counted;
    const userTexts = api.name === "anthropic" ? anthropicUserTexts(body) : [];
    if (userTexts.some((t) => refusedTriggers.has(t))) {
      return sendTurn({
        api,
        res,
        turn: { text: "", stop: "refusal" },
        body: body as Record<string, unknown>,
        counted,
        defaultChunkDelayMs: chunkDelayMs,
        signal,
      });
    }
    const turn = queue.shift() ?? llm.respond?.(recorded);
    if (turn !== undefined && "stop" in turn && turn.stop === "refusal" && userTexts.length > 0)
      refusedTriggers.add(userTexts.at(-1)!);
    if (turn === undefined) {
      return sendError({ api, res, status: 500, error: { message: "fake llm: no scripted turn" } });
    }
    await sendTurn({
      api,
      res,
      turn,
      body: body as Record<string, unknown>,
      counted,
      defaultChunkDelayMs: chunkDelayMs,
      signal,
    });
  }

  /** Lets a test in another process drive the fake (see main.ts). */
  async function answerControl(path: string, req: IncomingMessage, res: ServerResponse) {
    if (req.method === "POST" && path === "/_script") {
      const parsed = parseJson(await readBody(req));
      if (!parsed.ok) return sendJson(res, 400, { error: "body must be a JSON array of turns" });
      llm.script(...(Array.isArray(parsed.value) ? parsed.value : [parsed.value]));
      return sendJson(res, 200, { pending: queue.length });
    }
    if (req.method === "GET" && path === "/_requests") return sendJson(res, 200, requests);
    if (req.method === "GET" && path === "/_pending") return sendJson(res, 200, { pending: queue.length });
    if (req.method === "POST" && path === "/_reset") {
      llm.reset();
      return sendJson(res, 200, { pending: 0 });
    }
    sendJson(res, 404, {
      type: "error",
      error: { type: "not_found_error", message: `Not found: ${req.method} ${path}` },
    });
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://fake").pathname;
    const api = req.method === "POST" ? wireApiFor(path) : null;
    const inFlight = new AbortController();
    requestsInFlight.add(inFlight);
    res.on("close", () => {
      inFlight.abort();
      requestsInFlight.delete(inFlight);
    });
    res.on("error", () => {}); // a client that hung up mid-stream is not a failure of the fake
    const work = api === null ? answerControl(path, req, res) : answerLlm(api, path, req, res, inFlight.signal);
    work.catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      sendJson(res, 500, { error: { message: `fake llm: ${String(error)}` } });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });

  const llm: FakeLlm = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    script: (...turns) => void queue.push(...turns),
    respond: null,
    requests,
    pending: () => queue.length,
    reset() {
      queue.length = 0;
      requests.length = 0;
      refusedTriggers.clear();
      promptCache.reset();
      llm.respond = null;
    },
    close() {
      if (!server.listening) return Promise.resolve();
      for (const inFlight of requestsInFlight) inFlight.abort();
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
  return llm;
}

/** The text of each user message of an Anthropic request (tool results aside). */
function anthropicUserTexts(body: unknown): string[] {
  const messages = (body as { messages?: { role: string; content: unknown }[] }).messages ?? [];
  return messages
    .filter((m) => m.role === "user")
    .map((m) =>
      typeof m.content === "string"
        ? m.content
        : (m.content as { type: string; text?: string }[])
            .filter((b) => b.type === "text")
            .map((b) => b.text ?? "")
            .join("\n"),
    )
    .filter((t) => t !== "");
}
