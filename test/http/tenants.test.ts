/**
 * API keys and tenants: with keys required, every route that takes an id
 * (and every list) answers a tenant's own data, answers another tenant's id
 * exactly as an unknown one, and refuses a request without a live key.
 */
import { beforeAll, describe, expect, test, vi } from "vitest";
import { useLoopd } from "../support/helpers/use-loopd.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { png } from "../support/helpers/test-images.js";

const f = useLoopd({ env: { API_KEYS_REQUIRED: "true", ADMIN_TOKEN: "admin-token-0123456789abcdef" } });
type Method = "GET" | "POST" | "PATCH" | "DELETE";
const call = (
  key: string | null,
  method: Method,
  url: string,
  payload?: object,
  headers: Record<string, string> = {},
) =>
  f.loopd.app.inject({
    method,
    url,
    ...(payload && { payload }),
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...headers },
  });

let a = "";
let b = "";
let revoked = "";
/** Tenant a's conversation with a paused run (a call waiting for approval) and its ended first run. */
let conv = "";
let paused = "";
let ended = "";
/** The image tenant a sent in its first message. */
let att = "";
/** Tenant a's agent. */
const agent = "support";

beforeAll(async () => {
  a = (await f.loopd.services.store.keys.create({ tenant: "acme", name: null })).key;
  b = (await f.loopd.services.store.keys.create({ tenant: "beta", name: null })).key;
  const gone = await f.loopd.services.store.keys.create({ tenant: "acme", name: "old" });
  await f.loopd.services.store.keys.revoke(gone.row.id);
  revoked = gone.key;
  expect((await call(a, "POST", "/agents", { name: agent, provider: "openai" })).statusCode).toBe(201);
  const created = await call(a, "POST", "/conversations", { provider: "openai", approval_required: ["calculate"] });
  expect(created.statusCode).toBe(201);
  conv = created.json().id;
  f.llm.script({ text: "Hi." });
  const image = {
    type: "image",
    source: { type: "base64", media_type: "image/png", data: png(8, 8).toString("base64") },
  };
  const first = (
    await call(a, "POST", `/conversations/${conv}/messages`, { content: [{ type: "text", text: "Hello" }, image] })
  ).json();
  ended = first.run.id;
  att = first.messages[0].content[1].attachment_id;
  f.llm.script({ toolCalls: [{ name: "calculate", input: { expression: "1+1" } }] });
  const sent = (await call(a, "POST", `/conversations/${conv}/messages`, { content: "Add." })).json();
  expect(sent.run.status).toBe("requires_action");
  paused = sent.run.id;
});

/**
 * Every route that names a conversation, a run or an agent, as [method, url, body], read from /openapi.json as
 * fuzz.test.ts does: a new route is checked without anyone remembering to list it. `{conv}`, `{ended}`,
 * `{paused}`, `{att}` and `{agent}` stand for the ids; a pause's answer and cancel take the paused run, the rest
 * the ended one. The deletions go last (they end the conversation and the agent the others read).
 */
let ROUTES: [Method, string, object?][] = [];
/** The bodies of the routes that take one; any other POST sends `{}`. */
const BODIES: Record<string, object> = {
  "PATCH /conversations/{id}": { title: "mine" },
  "POST /conversations/{id}/messages": { content: "Another." },
  "POST /conversations/{id}/runs/{run_id}/actions": { approvals: [{ tool_call_id: "x", approve: true }] },
  "PATCH /agents/{name}": { version: 1, system: "mine" },
};
/** The order the routes are called in (each route's own answer is checked once the one before it answered); new ones go before the deletion. */
const ORDER = [
  "GET /conversations/{id}",
  "PATCH /conversations/{id}",
  "GET /conversations/{id}/messages",
  "POST /conversations/{id}/messages",
  "GET /conversations/{id}/context",
  "GET /conversations/{id}/attachments/{attachment_id}",
  "GET /conversations/{id}/runs",
  "GET /conversations/{id}/runs/{run_id}",
  "GET /conversations/{id}/runs/{run_id}/events",
  "GET /conversations/{id}/runs/{run_id}/trace",
  "GET /conversations/{id}/runs/{run_id}/eval-case",
  "GET /conversations/{id}/runs/{run_id}/webhooks",
  "GET /runs/{run_id}",
  "POST /conversations/{id}/runs/{run_id}/actions",
  "POST /conversations/{id}/runs/{run_id}/cancel",
];
const rank = (route: string) =>
  route.startsWith("DELETE ") ? ORDER.length + 1 : ORDER.includes(route) ? ORDER.indexOf(route) : ORDER.length;

beforeAll(async () => {
  const doc = (await f.loopd.app.inject({ method: "GET", url: "/openapi.json" })).json();
  const named = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .filter(([path]) => ["/conversations/{id}", "/runs/{run_id}", "/agents/{name}"].some((p) => path.startsWith(p)))
    .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
    .sort((x, y) => rank(x) - rank(y));
  ROUTES = named.flatMap((route): [Method, string, object?][] => {
    const [method, path] = route.split(" ") as [Method, string];
    const run = /\/(actions|cancel)$/.test(path) ? "{paused}" : "{ended}";
    const url = path
      .replace("{id}", "{conv}")
      .replace("{run_id}", run)
      .replace("{attachment_id}", "{att}")
      .replace("{name}", "{agent}")
      .replace("{version}", "1");
    const body = BODIES[route] ?? (method === "POST" ? {} : undefined);
    const entry: [Method, string, object?] = body ? [method, url, body] : [method, url];
    // The history in Anthropic's shape is read by the same route with a query: checked too.
    return route === "GET /conversations/{id}/messages" ? [entry, [method, `${url}?format=anthropic`]] : [entry];
  });
});

const fill = (url: string, ids = { conv, ended, paused, att, agent }) =>
  url
    .replace("{conv}", ids.conv)
    .replace("{ended}", ids.ended)
    .replace("{paused}", ids.paused)
    .replace("{att}", ids.att)
    .replace("{agent}", ids.agent);
const routes = (): [Method, string, object?][] => ROUTES.map(([method, url, body]) => [method, fill(url), body]);

/** A body with the ids it names taken out, to compare one 404 with another. */
const shape = (res: { statusCode: number; json(): any }) => ({
  status: res.statusCode,
  body: JSON.stringify(res.json())
    .replaceAll(/(conv|run|att)_[a-z0-9]+/g, "$1_ID")
    .replaceAll(/agent [a-z0-9_-]+/g, "agent NAME"),
});
/** The same route with ids that do not exist. */
const unknownOf = (url: string) =>
  fill(url, {
    conv: "conv_0mx0000000000000000000000",
    ended: "run_0mx0000000000000000000000",
    paused: "run_0mx0000000000000000000001",
    att: "att_0mx0000000000000000000000",
    agent: "no-such-agent",
  });

describe("another tenant's ids", () => {
  test("every route that names a conversation, a run or an agent: beta gets what an unknown id gets, and changes nothing", async () => {
    expect(ROUTES.length).toBeGreaterThan(0);
    for (const [method, url, body] of ROUTES) {
      const before = await rowCounts(f.database);
      const other = await call(b, method, fill(url), body);
      const unknown = await call(b, method, unknownOf(url), body);
      expect({ route: `${method} ${url}`, status: other.statusCode }).toEqual({
        route: `${method} ${url}`,
        status: 404,
      });
      expect({ route: `${method} ${url}`, ...shape(other) }).toEqual({ route: `${method} ${url}`, ...shape(unknown) });
      expect({ route: `${method} ${url}`, rows: await rowCounts(f.database) }).toEqual({
        route: `${method} ${url}`,
        rows: before,
      });
    }
  });

  test("lists show only the caller's own", async () => {
    expect((await call(b, "GET", "/conversations")).json().data).toEqual([]);
    expect((await call(a, "GET", "/conversations")).json().data.map((c: { id: string }) => c.id)).toContain(conv);
    expect((await call(b, "GET", "/agents")).json().data).toEqual([]);
    expect((await call(a, "GET", "/agents")).json().data.map((x: { name: string }) => x.name)).toEqual([agent]);
  });
});

describe("without a live key", () => {
  test.each([
    ["no key", null, {}],
    ["a wrong key", "lpd_not-a-key-that-exists-0000000000000000000", {}],
    ["a revoked key", "REVOKED", {}],
    ["a key in x-api-key that is wrong", null, { "x-api-key": "lpd_wrong" }],
  ] as const)("%s: every route answers 401", async (_what, key, headers) => {
    for (const [method, url, body] of [
      ...routes(),
      ["GET", "/conversations"],
      ["POST", "/conversations", {}],
      ["GET", "/agents"],
      ["POST", "/agents", { name: "x" }],
      ["GET", "/tools"],
      ["GET", "/tools/servers"],
      ["GET", "/webhooks/secret"],
      ["POST", "/webhooks/secret/rotate"],
    ] as [Method, string, object?][]) {
      const res = await call(key === "REVOKED" ? revoked : key, method, url, body, headers);
      expect({ url, status: res.statusCode, code: res.json().error?.code }).toEqual({
        url,
        status: 401,
        code: "unauthorized",
      });
    }
  });

  test("health, the API's description and its reference page are open", async () => {
    expect((await call(null, "GET", "/healthz")).statusCode).toBe(200);
    expect((await call(null, "GET", "/readyz")).statusCode).toBe(200);
    expect((await call(null, "GET", "/openapi.json")).statusCode).toBe(200);
    expect((await call(null, "GET", "/docs")).statusCode).toBeLessThan(400);
  });

  test("x-api-key works like Authorization: Bearer", async () => {
    expect((await call(null, "GET", `/conversations/${conv}`, undefined, { "x-api-key": a })).statusCode).toBe(200);
  });
});

describe("the admin routes", () => {
  const admin = { authorization: "Bearer admin-token-0123456789abcdef" };
  test("make a key shown once, list keys without it, revoke: the key is refused at once on this instance", async () => {
    const made = await f.loopd.app.inject({
      method: "POST",
      url: "/admin/keys",
      payload: { tenant: "gamma", name: "ci" },
      headers: admin,
    });
    expect(made.statusCode).toBe(201);
    const { id, key } = made.json();
    expect(key).toMatch(/^lpd_[A-Za-z0-9_-]{43}$/);
    expect((await call(key, "GET", "/conversations")).statusCode).toBe(200);
    const listed = (await f.loopd.app.inject({ method: "GET", url: "/admin/keys?tenant=gamma", headers: admin })).json()
      .data;
    expect(listed).toEqual([expect.objectContaining({ id, tenant: "gamma", name: "ci", revoked_at: null })]);
    expect(JSON.stringify(listed)).not.toContain(key);
    expect((await f.loopd.app.inject({ method: "DELETE", url: `/admin/keys/${id}`, headers: admin })).statusCode).toBe(
      204,
    );
    // Used a moment before (so its lookup is remembered), and 10 ms after: the instance that revoked it does not wait out its cache.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await call(key, "GET", "/conversations")).statusCode).toBe(401);
  });

  test("a key revoked elsewhere (another instance, npm run keys) is refused within a second", async () => {
    const { key, row } = await f.loopd.services.store.keys.create({ tenant: "gamma", name: "elsewhere" });
    expect((await call(key, "GET", "/conversations")).statusCode).toBe(200);
    // Straight in the database, as another process does: this instance only learns when its remembered answer runs out.
    await f.loopd.services.store.keys.revoke(row.id);
    const revokedAt = Date.now();
    await vi.waitFor(async () => expect((await call(key, "GET", "/conversations")).statusCode).toBe(401), {
      timeout: 1_500,
      interval: 50,
    });
    expect(Date.now() - revokedAt).toBeLessThan(1_500);
  });

  test("a tenant's key, or none, gets 401 from them", async () => {
    expect((await call(a, "GET", "/admin/keys")).statusCode).toBe(401);
    expect((await call(null, "POST", "/admin/keys", { tenant: "x" })).statusCode).toBe(401);
  });
});

describe("a tenant's own", () => {
  test("every route answers 2xx", async () => {
    const run = (await call(a, "GET", `/conversations/${conv}/runs/${paused}`)).json();
    f.llm.script({ text: "2." });
    const answered = await call(a, "POST", `/conversations/${conv}/runs/${paused}/actions`, {
      approvals: [{ tool_call_id: run.required_action.tool_calls[0].tool_call_id, approve: true }],
    });
    expect(answered.statusCode).toBe(200);
    f.llm.script({ text: "Again." });
    for (const [method, url, body] of routes()) {
      if (url.endsWith("/actions")) continue;
      const res = await call(a, method, url, body);
      expect({ url, ok: res.statusCode < 300 }).toEqual({ url, ok: true });
    }
  });
});

describe("chats are a tenant's", () => {
  const chatBody = (id: string) => ({
    id,
    trigger: "submit-message",
    conversation: { provider: "openai" },
    messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Hello" }] }],
  });

  test("another tenant's conversation id on the chat routes: what an unknown one gets, and nothing changes", async () => {
    // The file's `conv` is deleted by now: a conversation of a's own.
    const conv = (await call(a, "POST", "/conversations", { provider: "openai" })).json().id as string;
    const before = await rowCounts(f.database);
    for (const [method, url, body] of [
      ["GET", `/ui/chat/${conv}/messages`],
      ["GET", `/ui/chat/${conv}/stream`],
      ["POST", "/ui/chat", chatBody(conv)],
    ] as [Method, string, object?][]) {
      const other = await call(b, method, url, body);
      const unknown = await call(b, method, unknownOf(url), body && chatBody("conv_0mx0000000000000000000000"));
      expect({ url, status: other.statusCode }).toEqual({ url, status: 404 });
      expect(shape(other)).toEqual(shape(unknown));
    }
    expect(await rowCounts(f.database)).toEqual(before);
    expect((await call(a, "GET", `/ui/chat/${conv}/messages`)).statusCode).toBe(200);
  });

  test("one chat id in two tenants names two conversations, each its tenant's", async () => {
    f.llm.script({ text: "Hi a." }, { text: "Hi b." });
    expect((await call(a, "POST", "/ui/chat", chatBody("shared-chat-id"))).statusCode).toBe(200);
    expect((await call(b, "POST", "/ui/chat", chatBody("shared-chat-id"))).statusCode).toBe(200);
    const ofA = (await call(a, "GET", "/ui/chat/shared-chat-id/messages")).json();
    const ofB = (await call(b, "GET", "/ui/chat/shared-chat-id/messages")).json();
    expect(ofA.at(-1).parts.at(-1).text).toBe("Hi a.");
    expect(ofB.at(-1).parts.at(-1).text).toBe("Hi b.");
    const chatsOf = async (key: string) =>
      (await call(key, "GET", "/conversations"))
        .json()
        .data.filter((c: { chat_id: string | null }) => c.chat_id === "shared-chat-id");
    expect(await chatsOf(a)).toHaveLength(1);
    expect(await chatsOf(b)).toHaveLength(1);
    expect((await chatsOf(a))[0].id).not.toBe((await chatsOf(b))[0].id);
  });
});
