/**
 * The concurrent floor of bench section streams: the least a durable streaming
 * agent server must do per run: the user message inserted before
 * `run.created` goes out, then per step one streamed model call (its text
 * forwarded as SSE), the tool run, one insert of the step's messages. The
 * history stays in memory. Started by start-stream-floor.ts:
 *
 *   FLOOR_PORT          where to listen on 127.0.0.1
 *   FLOOR_LLM_URL       the fake's OpenAI base URL (…/v1)
 *   FLOOR_DATABASE_URL  a Postgres database (a pg.Pool of FLOOR_POOL_SIZE, default 10 as loopd's), or
 *   FLOOR_DATA_DIR      a folder for PGlite in this process
 *   FLOOR_REQUEST       JSON FloorRequest: loopd's model, tools, limits and system messages
 *   FLOOR_NO_DATABASE   1: the same server saving nothing (no database opened, no insert): the SDK, HTTP and the
 *                       model alone, the loop's physical limit
 */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { PGlite } from "@electric-sql/pglite";
import OpenAI from "openai";
import pg from "pg";
import { accumulate, type FloorRequest } from "../lib/floor-loop.js";
import { percentile } from "../lib/measure.js";
import type { FloorStats } from "./start-stream-floor.js";

type Message = OpenAI.ChatCompletionMessageParam;
type ToolCall = OpenAI.ChatCompletionMessageFunctionToolCall;

const env = (name: string) => process.env[name] || undefined;
const request = JSON.parse(env("FLOOR_REQUEST") ?? "null") as FloorRequest | null;
if (!request) throw new Error("FLOOR_REQUEST is required");
// The SDK's own fetch (undici's keep-alive agent, no connection cap), as loopd's OpenAI provider uses it.
const sdk = new OpenAI({ apiKey: "bench", baseURL: env("FLOOR_LLM_URL"), maxRetries: 0 });

// Same table and statement as floor-store.ts (re-created: its helpers are not exported).
const CREATE_TABLE = `create table if not exists floor_messages (conversation_id text not null, seq integer not null,
  role text not null, content jsonb not null, primary key (conversation_id, seq))`;

/** One multi-row insert: `values ($1, $2, $3, $4), ($1, $5, $6, $7), …`. */
function insertText(rows: number): string {
  const values = Array.from({ length: rows }, (_, i) => `($1, $${2 + 3 * i}, $${3 + 3 * i}, $${4 + 3 * i})`);
  return `insert into floor_messages (conversation_id, seq, role, content) values ${values.join(", ")}`;
}

const insertValues = (conversationId: string, firstSeq: number, messages: readonly Message[]): unknown[] => [
  conversationId,
  ...messages.flatMap((m, i) => [firstSeq + i, m.role, JSON.stringify(m)]),
];

/** `append`: the step's messages in one statement, so one transaction. */
type Store = {
  append(conversationId: string, firstSeq: number, messages: readonly Message[]): Promise<void>;
  close(): Promise<void>;
};

/** Time from asking for a connection to holding it, one sample per append. */
const poolWaits: number[] = [];
let [runs, steps, failures] = [0, 0, 0];

async function openStore(): Promise<Store> {
  if (env("FLOOR_NO_DATABASE") === "1") return { append: async () => {}, close: async () => {} };
  const databaseUrl = env("FLOOR_DATABASE_URL");
  if (databaseUrl) {
    // loopd's pool settings (src/store/db.ts), idle timeout left at pg's default as there.
    const max = Number(env("FLOOR_POOL_SIZE") ?? 10);
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max,
      connectionTimeoutMillis: 5_000,
      statement_timeout: 30_000,
    });
    pool.on("error", () => {}); // an idle client's error: the next query reports it
    // Two floors starting at once on one database race `if not exists` ("type already exists"): a lock serializes them.
    await pool.query(`select pg_advisory_xact_lock(hashtext('floor_messages')); ${CREATE_TABLE}`);
    return {
      async append(conversationId, firstSeq, messages) {
        const asked = performance.now();
        const client = await pool.connect();
        poolWaits.push(performance.now() - asked);
        try {
          // Named: prepared once per connection and row count, as floor-store.ts does.
          const rows = messages.length;
          await client.query({
            name: `floor_append_${rows}`,
            text: insertText(rows),
            values: insertValues(conversationId, firstSeq, messages),
          });
        } finally {
          client.release();
        }
      },
      close: () => pool.end(),
    };
  }
  const db = await PGlite.create(env("FLOOR_DATA_DIR") ? { dataDir: env("FLOOR_DATA_DIR") } : {});
  await db.query(CREATE_TABLE);
  // PGlite serializes behind a mutex of its own that tells no one how long a
  // query waited. So the writes queue here first, FIFO as PGlite's mutex is:
  // the same serialization, PGlite's mutex then always free, and the wait
  // (call → this write's turn) measurable, with no extra statement. Expect it
  // near 0: a PGlite query runs start to end in microtasks (no I/O callback
  // gets in between), so a write is only queued behind one called in the same
  // tick. Its cost shows as event-loop time, not as wait.
  let tail: Promise<void> = Promise.resolve();
  return {
    async append(conversationId, firstSeq, messages) {
      const asked = performance.now();
      const previous = tail;
      let done!: () => void;
      tail = new Promise<void>((resolve) => (done = resolve));
      await previous;
      poolWaits.push(performance.now() - asked);
      try {
        await db.query(insertText(messages.length), insertValues(conversationId, firstSeq, messages));
      } finally {
        done();
      }
    },
    close: () => db.close(),
  };
}

/** `calculate`: numbers, + - * /, unary signs and parentheses, by recursive descent (no eval). */
function evaluate(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?|[-+*/()]|\S/gi) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = () => tokens[at++];
  const sum = (): number => {
    let value = product();
    while (peek() === "+" || peek() === "-") value = take() === "+" ? value + product() : value - product();
    return value;
  };
  const product = (): number => {
    let value = unary();
    while (peek() === "*" || peek() === "/") value = take() === "*" ? value * unary() : value / unary();
    return value;
  };
  const unary = (): number => {
    const token = take();
    if (token === "-") return -unary();
    if (token === "+") return unary();
    const value = token === "(" ? sum() : Number(token);
    if (token === "(") return take() === ")" ? value : fail("expected )");
    return token !== undefined && /^[\d.]/.test(token) && !Number.isNaN(value)
      ? value
      : fail(`unexpected ${token ?? "end"}`);
  };
  const value = sum();
  if (at < tokens.length) fail(`unexpected ${tokens[at]}`);
  return Number.isFinite(value) ? value : fail("the result is not a finite number");
}

function fail(message: string): never {
  throw new Error(message);
}

function calculateTool(call: ToolCall): OpenAI.ChatCompletionToolMessageParam {
  let content: string;
  try {
    if (call.function.name !== "calculate") throw new Error(`unknown tool ${call.function.name}`);
    const { expression } = JSON.parse(call.function.arguments) as { expression: string };
    content = JSON.stringify({ expression, result: evaluate(String(expression)) }); // loopd's result shape
  } catch (error) {
    content = `Error: ${error instanceof Error ? error.message : String(error)}`;
  }
  return { role: "tool", tool_call_id: call.id, content };
}

/** A refused request: answered with its status, not counted as a failure. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_BODY = 1024 * 1024;
/** The body, refused past 1 MB. Read by events, not for-await: leaving that loop early would destroy the socket before the 413. */
function readBody(req: IncomingMessage): Promise<string> {
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY)
    return Promise.reject(new HttpError(413, "body over 1 MB"));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) return void chunks.push(chunk);
      // Past the bound: the rest is read and dropped until the 413 closes the connection (a second reject is a no-op).
      chunks.length = 0;
      reject(new HttpError(413, "body over 1 MB"));
    });
    req.on("error", reject);
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "the body is not JSON");
  }
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  // After a refused body, close: the rest of it is not worth reading.
  res.writeHead(status, { "content-type": "application/json", ...(status === 413 && { connection: "close" }) });
  res.end(JSON.stringify(value));
}

/**
 * One streaming run. The conversation is not looked up: the floor keeps no
 * conversation rows (loopd creates them untimed), and behind the round-robin
 * proxy it was created on the other instance. One run per conversation, as
 * in section streams, so the user message is seq 1.
 */
async function streamRun(conversationId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parseJson(await readBody(req)) as { content?: unknown; stream?: unknown } | null;
  if (typeof body?.content !== "string") throw new HttpError(400, "content must be a string");
  if (body.stream !== true) throw new HttpError(400, "the floor only streams: send stream: true");
  const user: Message = { role: "user", content: body.content };
  await store.append(conversationId, 1, [user]);
  const runId = randomUUID();
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    "x-accel-buffering": "no",
  });
  let eventId = 0;
  // The run belongs to the server, as loopd's: a client gone stops the writes, not the run.
  const send = async (event: string, data: unknown) => {
    if (res.destroyed) return;
    if (!res.write(`id: ${++eventId}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`))
      await once(res, "drain").catch(() => {});
  };
  await send("run.created", { run: { id: runId, status: "running", steps: 0 } });
  let step = 0;
  try {
    const history: Message[] = [...request!.system, user];
    for (let seq = 2; ;) {
      step++;
      steps++;
      const stream = await sdk.chat.completions.create({ ...request!.params, messages: history, stream: true });
      const { assistant, toolCalls } = await accumulate(stream, (text) => send("message.delta", { text }));
      const messages = [assistant, ...toolCalls.map(calculateTool)];
      history.push(...messages);
      await store.append(conversationId, seq, messages);
      seq += messages.length;
      if (toolCalls.length === 0) break;
    }
    runs++;
    await send("run.completed", { run: { id: runId, status: "completed", stop_reason: "end_turn", steps: step } });
  } catch (error) {
    failures++;
    await send("run.failed", { run: { id: runId, status: "failed", steps: step }, error: { message: String(error) } });
  }
  res.end();
}

function statsNow(): FloorStats {
  const sorted = [...poolWaits].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length === 0 ? 0 : percentile(sorted, q));
  const sum = sorted.reduce((total, ms) => total + ms, 0);
  return { poolWaitMs: { count: sorted.length, sum, p50: at(0.5), p99: at(0.99) }, runs, steps, failures };
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? "/", "http://floor").pathname;
  const messages = /^\/conversations\/([^/]+)\/messages$/.exec(path);
  if (req.method === "POST" && messages) return streamRun(decodeURIComponent(messages[1]!), req, res);
  req.resume(); // the other routes read no body
  if (req.method === "POST" && path === "/conversations") return sendJson(res, 201, { id: `conv_${randomUUID()}` });
  if (req.method === "GET" && path === "/healthz") return sendJson(res, 200, { ok: true });
  if (req.method === "GET" && path === "/stats") return sendJson(res, 200, statsNow());
  if (req.method === "POST" && path === "/stats/reset") {
    poolWaits.length = 0;
    [runs, steps, failures] = [0, 0, 0];
    return sendJson(res, 200, statsNow());
  }
  sendJson(res, 404, { error: `not found: ${req.method} ${path}` });
}

// Opened before listening: /healthz answers only once the store is open.
const store = await openStore();
const server = createServer({ noDelay: true }, (req, res) => {
  res.on("error", () => {}); // a client that hung up mid-stream
  route(req, res).catch((error: unknown) => {
    if (res.headersSent) return void res.end();
    if (error instanceof HttpError) return sendJson(res, error.status, { error: error.message });
    failures++;
    sendJson(res, 500, { error: String(error) });
  });
});
// As Fastify's default (loopd's): the bench's connections survive between rounds.
server.keepAliveTimeout = 72_000;
server.listen(Number(env("FLOOR_PORT") ?? 0), "127.0.0.1");
await once(server, "listening");

process.once("SIGTERM", () => {
  server.close();
  server.closeAllConnections(); // streams still open are cut: the bench stops the floor between rounds only
  void store.close().finally(() => process.exit(0));
});
