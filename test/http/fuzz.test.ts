import fc from "fast-check";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { z } from "zod";
import { ERROR_CODES, statusOf } from "../../src/errors.js";
import { rawRequest } from "../support/helpers/raw-http.js";
import { rowCounts, type RowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

/**
 * Property-based fuzzing of every route: generated requests with wrong
 * types, missing and extra fields, huge and deeply nested values, NUL and
 * lone surrogates, bad ids, cursors, headers (credentials and request ids
 * too, with API keys on), methods and content types.
 * Whatever comes in: never a 5xx, every non-2xx in the contract's error
 * shape, and a rejected request saves nothing. FUZZ_SEED replays a run.
 */

// With API keys on, as on a network: requests carry this file's key, and fuzzed credentials at times.
const f = useLoopd({
  listen: true,
  env: {
    API_KEYS_REQUIRED: "true",
    MOCK_PROVIDER: "true",
    ADMIN_TOKEN: "fuzz-admin-token-0123456789",
    RATE_LIMIT_PER_MIN: "0",
  },
});
let apiKey = "";
const auth = () => ({ authorization: `Bearer ${apiKey}` });
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const settings = (numRuns: number) => ({ numRuns, ...(seed !== undefined && { seed }), endOnFailure: true });
let sent = 0;

// ── What every answer must be ────────────────────────────────────────────

const contractError = z.strictObject({
  error: z.strictObject({
    code: z.enum(ERROR_CODES),
    message: z.string().min(1),
    details: z.record(z.string(), z.unknown()),
  }),
});

const openAiError = z.strictObject({
  error: z.strictObject({
    message: z.string().min(1),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
  }),
});

function expectContractAnswer(
  what: string,
  method: string,
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
) {
  const said = `${what} → ${res.statusCode} ${res.body.slice(0, 300)}`;
  expect(res.statusCode, said).toBeLessThan(500);
  if (res.statusCode < 400 || method === "HEAD") return;
  let body: unknown;
  expect(() => (body = JSON.parse(res.body)), said).not.toThrow();
  // `/v1/*` is OpenAI's API: OpenAI's error body, with the status loopd gives the error.
  if (/^\S+ \/v1(?:[/?#]|$)/.test(what)) {
    expect(openAiError.safeParse(body).success, said).toBe(true);
  } else {
    const parsed = contractError.safeParse(body);
    expect(parsed.success, said).toBe(true);
    expect(statusOf(parsed.data!.error.code), said).toBe(res.statusCode);
  }
  expect(res.body, said).not.toMatch(/at .*\.(ts|js):\d+|node_modules/);
  if (res.statusCode === 405) expect(res.headers.allow, said).toEqual(expect.any(String));
}

// ── Generators ───────────────────────────────────────────────────────────

/** One UTF-16 unit or code point, NUL and lone surrogates included. */
const char = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom("\u0000", "\ud800", "\udbff", "\udc00", "\udfff", "\uffff") },
);
const nastyString = fc.oneof(
  fc.string({ unit: char, maxLength: 30 }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "x\ud800",
    "\udc00y",
    "💥",
    "../..",
    "%00",
    "null",
    "__proto__",
    "constructor",
    "-1",
    "1e400",
  ),
);
const huge = fc.constantFrom(17_000, 200_000, 1_100_000).map((n) => "x".repeat(n));
const scalar = fc.oneof(
  { weight: 6, arbitrary: nastyString },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53, -0, 1e308) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: huge },
);
const key = fc.oneof(
  fc.string({ unit: char, maxLength: 12 }),
  fc.constantFrom("__proto__", "constructor", "type", "text", "name"),
);
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    fc.array(tie("json"), { maxLength: 4 }),
    fc.dictionary(key, tie("json"), { maxKeys: 4 }),
  ),
}));

const textBlock = fc.record(
  {
    type: fc.constantFrom("text", "text", "image", "tool_call"),
    text: fc.oneof(fc.constantFrom("What is 2+2?", "hi"), nastyString),
  },
  { requiredKeys: [] },
);
/** A field's value: mostly the kind it takes (valid or nearly), sometimes anything. */
const fieldOf = <T>(likely: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: likely }, { weight: 1, arbitrary: json });
const conversationFields = {
  system: fieldOf(fc.oneof(fc.constant(null), fc.constantFrom("Be brief."), nastyString)),
  title: fieldOf(fc.oneof(fc.constant(null), nastyString)),
  provider: fieldOf(fc.constantFrom("mock", "mock", "anthropic", "openai", "gemini", "")),
  model: fieldOf(fc.constantFrom("loopd-mock", "", " ", "x".repeat(201))),
  tools: fieldOf(fc.subarray(["calculate", "get_current_time", "read_file", "rm_rf", "", "calculate"])),
  metadata: fieldOf(fc.dictionary(key, json, { maxKeys: 4 })),
};
const messageFields = {
  content: fieldOf(
    fc.oneof(fc.constantFrom("What is 2+2?", "hi", "", "   "), nastyString, fc.array(textBlock, { maxLength: 3 })),
  ),
  max_steps: fieldOf(fc.oneof(fc.integer({ min: -2, max: 3 }), fc.constantFrom(1.5, 2 ** 31, 1000))),
  tool_choice: fieldOf(
    fc.oneof(
      fc.constantFrom("auto", "none", "sometimes"),
      fc.record({ name: fc.constantFrom("calculate", "nope", "") }, { requiredKeys: [] }),
    ),
  ),
  model: fieldOf(fc.constantFrom("loopd-mock", "", "x".repeat(201))),
  stream: fieldOf(fc.boolean()),
};
/** The fields a route's body takes, any of them missing, with now and then a field it does not take. */
const bodyOf = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc
    .tuple(
      fc.record(fields, { requiredKeys: [] }),
      fc.option(fc.dictionary(fc.constantFrom("max_step", "titel", "extra", "metadata "), json, { maxKeys: 2 }), {
        freq: 4,
      }),
    )
    .map(([body, extra]) => ({ ...extra, ...body }));

/** JSON text nested `depth` deep inside one of the body's fields: too deep for any stack that walks it recursively. */
const deepText = fc
  .record({
    field: fc.constantFrom("metadata", "content", "tools", "tool_choice", "system", "x"),
    depth: fc.integer({ min: 30, max: 5_000 }),
    array: fc.boolean(),
  })
  .map(
    ({ field, depth, array }) =>
      `{"${field}":${array ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth)}}`,
  );
const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant("application/json") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "application/JSON",
      "application/json; charset=utf-16",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/vnd.api+json",
      "text/event-stream",
      "*/*",
      "",
      "garbage",
    ),
  },
);
/** What goes in a request's body: a route's fields, any JSON at all, or text that may not be JSON. */
const payload = (fields: Record<string, fc.Arbitrary<unknown>> | null) =>
  fc.oneof(
    ...(fields ? [{ weight: 6, arbitrary: bodyOf(fields).map((b) => JSON.stringify(b)) }] : []),
    { weight: 2, arbitrary: json.map((v) => JSON.stringify(v) ?? "") },
    { weight: 1, arbitrary: deepText },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.constantFrom("{", '{"content":', "content=hi&max_steps=2", "null", "[]", "\u0000"),
      ),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

/** A path segment as a client may send it: a real id (by its place in the pool), a nasty one, or bytes that are not UTF-8. */
type Segment = { pool: number } | string;
const encodeSegment = (s: string) =>
  [...Buffer.from(s, "utf8")]
    .map((b) =>
      /[\w.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`,
    )
    .join("");
const segment: fc.Arbitrary<Segment> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ pool: fc.nat(2) }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "%00",
      "a%00b",
      "%ED%A0%80",
      "%C0%AF",
      "%zz",
      "%",
      "x".repeat(101),
      "x".repeat(2_500),
      "%2F",
      "..",
      ".",
      "conv_nope",
      "run_nope",
      "%20",
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: char, minLength: 1, maxLength: 20 }).map(encodeSegment) },
);
const cursor = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(
        "2025-01-01T00:00:00.000Z",
        "+275760-09-13T00:00:00.000Z",
        "0000-01-01T00:00:00.000Z",
        "nope",
        "",
      ),
      nastyString,
    )
    .map(([iso, id]) => Buffer.from(`${iso}|${id}`).toString("base64url")),
  nastyString,
);
const queryValue = fc.oneof(
  nastyString,
  fc.integer().map(String),
  fc.constantFrom("0", "1", "100", "101", "1e2", "99999999999", "anthropic", "openai"),
  cursor,
);
const query = fc
  .array(fc.tuple(fc.constantFrom("limit", "cursor", "after_seq", "format", "after", "junk"), queryValue), {
    maxLength: 3,
  })
  .map((pairs) => (pairs.length === 0 ? "" : `?${pairs.map(([k, v]) => `${k}=${encodeSegment(v)}`).join("&")}`));
const headerValue = fc.oneof(
  fc.string({ unit: "grapheme-ascii", maxLength: 300 }),
  fc.constantFrom("", " ", "-1", "0", "7", "99999999999", "é"),
);
const credential = fc.oneof(
  headerValue,
  headerValue.map((v) => `Bearer ${v}`),
  fc.constantFrom("Bearer lpd_", "Bearer  lpd_x", "bearer", "Basic dXNlcjpwYXNz", `Bearer lpd_${"A".repeat(43)}`),
);
const headers = fc.record(
  {
    "idempotency-key": headerValue,
    "last-event-id": headerValue,
    accept: fc.constantFrom("text/event-stream", "application/json", "*/*"),
    "x-fuzz": headerValue,
    authorization: credential,
    "x-api-key": headerValue,
    "x-request-id": headerValue,
    origin: fc.oneof(headerValue, fc.constantFrom("https://app.example.com", "null")),
  },
  { requiredKeys: [] },
);
const anyMethod = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "PROPFIND");

// ── The routes and the conversations requests are aimed at ───────────────

interface Route {
  method: string;
  path: string;
  fields: Record<string, fc.Arbitrary<unknown>> | null;
}
let routes: Route[] = [];
/** Real conversations with a finished run, so that requests reach the database; one deleted is replaced. */
const pool: Array<{ conversation: string; run: string }> = [];

async function poolEntry() {
  const app = f.loopd.app;
  const conversation = (await app.inject({ method: "POST", url: "/conversations", headers: auth() })).json().id;
  // On a loaded machine the overload guard may shed the new run (503 with Retry-After): a client tries again then.
  for (let tries = 1; ; tries++) {
    const reply = await app.inject({
      method: "POST",
      url: `/conversations/${conversation}/messages`,
      payload: { content: "What is 2+2?" },
      headers: auth(),
    });
    if (reply.statusCode === 200) return { conversation, run: reply.json().run.id as string };
    const retryAfter = Number(reply.headers["retry-after"]);
    if (reply.statusCode !== 503 || !Number.isFinite(retryAfter) || tries >= 10)
      throw new Error(`a pool conversation's run was refused: ${reply.statusCode} ${reply.body}`);
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
  }
}

beforeAll(async () => {
  apiKey = (await f.loopd.services.store.keys.create({ tenant: "fuzz", name: null })).key;
  const doc = (await f.loopd.app.inject({ method: "GET", url: "/openapi.json" })).json();
  routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
    Object.keys(methods).map((m) => {
      const method = m.toUpperCase();
      const fields =
        method === "POST" && path === "/conversations/{id}/messages"
          ? messageFields
          : (method === "POST" || method === "PATCH") && (path === "/conversations" || path === "/conversations/{id}")
            ? conversationFields
            : null;
      return { method, path: path.replace(/\{(\w+)\}/g, ":$1"), fields };
    }),
  );
  for (let i = 0; i < 3; i++) pool.push(await poolEntry());
});
// Conversations a request switches to another provider get an instant answer from the fake model.
beforeEach(() => {
  f.llm.respond = () => ({ text: "fuzzed" });
});
afterAll(() => {
  console.log(`fuzz: ${sent} generated requests`);
});

const resolvePath = (template: string, ids: Segment[]) => {
  let i = 0;
  return template.replace(/:(\w+)/g, (_m, name: string) => {
    const s = ids[i++]!;
    return typeof s === "string" ? s : pool[s.pool]![name === "run_id" ? "run" : "conversation"];
  });
};

/**
 * Sends one generated request through `app.inject` and checks the answer.
 * `baseline` is the row counts before it; returns the counts after.
 */
async function sendAndCheck(req: InjectOptions & { method: string; url: string }, baseline: RowCounts) {
  sent++;
  const res: LightMyRequestResponse = await f.loopd.app.inject(req);
  const what = `${req.method} ${req.url.slice(0, 200)} ${JSON.stringify(req.headers ?? {}).slice(0, 200)} ${String(req.payload ?? "").slice(0, 200)}`;
  expectContractAnswer(what, req.method, res);
  if (req.method === "GET" || req.method === "HEAD") return baseline;
  const poolIndex = pool.findIndex((p) => req.url.startsWith(`/conversations/${p.conversation}`));
  if (res.statusCode === 204 && poolIndex >= 0) pool[poolIndex] = await poolEntry();
  const after = await rowCounts(f.database);
  if (res.statusCode >= 400) expect(after, `${what} → ${res.statusCode} saved something`).toEqual(baseline);
  return after;
}

/** Thousands of requests per test: on a busy machine they take far longer than a test's usual 30 s. */
const FUZZ_TIMEOUT_MS = 180_000;

describe("fuzzing every route through app.inject", () => {
  test(
    "any request to any route: never a 5xx, errors in the contract's shape, nothing saved when refused",
    async () => {
      let baseline = await rowCounts(f.database);
      const request = fc
        .record({
          route: fc.constantFrom(...routes),
          otherMethod: fc.option(anyMethod, { freq: 5 }),
          ids: fc.array(segment, { minLength: 2, maxLength: 2 }),
          query,
          headers,
          contentType,
        })
        .chain((r) => payload(r.route.fields).map((body) => ({ ...r, body })));
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const method = r.otherMethod ?? r.route.method;
          const headers: Record<string, string> = { ...auth(), ...r.headers };
          if (r.body !== undefined) headers["content-type"] = r.contentType;
          baseline = await sendAndCheck(
            {
              method: method as InjectOptions["method"] & string,
              url: resolvePath(r.route.path, r.ids) + r.query,
              headers,
              ...(r.body !== undefined && { payload: r.body }),
            },
            baseline,
          );
        }),
        settings(3_000),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    "bodies of the routes that take one: wrong types, missing and extra fields, deep and huge values",
    async () => {
      let baseline = await rowCounts(f.database);
      const bodyRoutes = routes.filter((r) => r.fields);
      const request = fc
        .constantFrom(...bodyRoutes)
        .chain((route) =>
          fc.record({ route: fc.constant(route), pool: fc.nat(2), body: payload(route.fields), contentType }),
        );
      await fc.assert(
        fc.asyncProperty(request, async ({ route, pool: i, body, contentType: type }) => {
          baseline = await sendAndCheck(
            {
              method: route.method as InjectOptions["method"] & string,
              url: resolvePath(route.path, [{ pool: i }, { pool: i }]),
              headers: body === undefined ? auth() : { ...auth(), "content-type": type },
              ...(body !== undefined && { payload: body }),
            },
            baseline,
          );
        }),
        settings(1_600),
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  test(
    "a DELETE racing a new message on one conversation: never a 5xx, and nothing of the conversation is left",
    async () => {
      const app = f.loopd.app;
      // Mostly a message that is valid, so that the POST gets as far as the database.
      const message = fc.oneof(
        { weight: 4, arbitrary: fc.record({ content: fc.constantFrom("What is 2+2?", "hi") }) },
        { weight: 1, arbitrary: bodyOf(messageFields) },
      );
      const race = fc.record({ lag: fc.nat(10), deleteFirst: fc.boolean(), body: message, stream: fc.boolean() });
      await fc.assert(
        fc.asyncProperty(race, async ({ lag, deleteFirst, body, stream }) => {
          const before = await rowCounts(f.database);
          const conversation = (await app.inject({ method: "POST", url: "/conversations", headers: auth() })).json().id;
          const later = async <T>(send: () => Promise<T>) => {
            for (let i = 0; i < lag; i++) await new Promise((resolve) => setImmediate(resolve));
            return send();
          };
          const del = () => app.inject({ method: "DELETE", url: `/conversations/${conversation}`, headers: auth() });
          const post = () =>
            app.inject({
              method: "POST",
              url: `/conversations/${conversation}/messages`,
              payload: { ...body, ...(stream && { stream: true }) },
              headers: auth(),
            });
          const [a, b] = await Promise.all(deleteFirst ? [del(), later(post)] : [post(), later(del)]);
          sent += 2;
          const [deleted, posted] = deleteFirst ? [a, b] : [b, a];
          expect(deleted.statusCode, deleted.body).toBe(204);
          expectContractAnswer("racing DELETE", "DELETE", deleted);
          expectContractAnswer(`racing POST ${JSON.stringify(body).slice(0, 200)}`, "POST", posted);
          for (let i = 0; f.loopd.runs.activeCount > 0 && i < 200; i++)
            await new Promise((resolve) => setTimeout(resolve, 5));
          expect(await rowCounts(f.database)).toEqual(before);
        }),
        settings(100),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe("fuzzing through a real socket what only a socket shows", () => {
  const headerName = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        "X-Fuzz",
        "Accept",
        "Idempotency-Key",
        "Last-Event-ID",
        "Content-Type",
        "Authorization",
        "X-Api-Key",
        "X-Request-Id",
        "Origin",
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom("Bad Header", "X\u0001", "", "X:Y", "Ä") },
  );
  const raw = fc.record({
    method: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom("GET", "POST", "DELETE", "PATCH") },
      { weight: 1, arbitrary: fc.constantFrom("G@T", "get", "PROPFIND", "") },
    ),
    path: fc.oneof(
      fc.constantFrom("/conversations", "/conversations/x", "/healthz", "/conversations/x/runs/y/events"),
      fc
        .string({ unit: fc.constantFrom(..."/%00zZ\u0001\u007f\u0080\u00ff é?#&=.;".split("")), maxLength: 30 })
        .map((s) => `/conversations/${s}`),
    ),
    version: fc.constantFrom("HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/x"),
    headers: fc.array(fc.tuple(headerName, fc.string({ unit: "binary-ascii", maxLength: 40 })), { maxLength: 3 }),
    pad: fc.oneof(
      { weight: 4, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: 15_000, max: 40_000 }) },
    ),
    body: fc.option(fc.string({ maxLength: 60 }), { freq: 2 }),
  });
  test(
    "raw request lines, targets and headers: never a 5xx, every error in the contract's shape",
    async () => {
      await fc.assert(
        fc.asyncProperty(raw, async ({ method, path, version, headers, pad, body }) => {
          sent++;
          const lines = [
            `${method} ${path} ${version}`,
            "Host: loopd",
            "Connection: close",
            // CR and LF would start a header of their own; the rest goes in as generated.
            ...headers.map(([name, value]) => `${name}: ${value.replace(/[\r\n]/g, "")}`),
            ...(pad > 0 ? [`X-Pad: ${"p".repeat(pad)}`] : []),
            ...(body !== null ? ["Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`] : []),
          ];
          const request = Buffer.from(`${lines.join("\r\n")}\r\n\r\n${body ?? ""}`, "latin1");
          const res = await Promise.race([
            rawRequest(f.loopd.url, request),
            new Promise<never>((_, reject) =>
              setTimeout(
                () =>
                  reject(new Error(`no answer in 5 s to ${JSON.stringify(request.toString("latin1").slice(0, 300))}`)),
                5_000,
              ),
            ),
          ]);
          expectContractAnswer(JSON.stringify(request.toString("latin1").slice(0, 300)), method, res);
        }),
        settings(300),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});

test("the suite sent at least 5,000 generated requests", () => {
  expect(sent).toBeGreaterThanOrEqual(5_000);
});
