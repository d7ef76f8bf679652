import type { InjectOptions } from "fastify";
import { describe, expect, test } from "vitest";
import { expectError } from "../support/helpers/expect-error.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd();
const inject = (opts: InjectOptions) => f.loopd.app.inject(opts);
const postJson = (url: string, text: string) =>
  inject({ method: "POST", url, headers: { "content-type": "application/json" }, payload: text });

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** `{"a":{"a":…1…}}`, `levels` objects deep. */
const nestedObject = (levels: number) => '{"a":'.repeat(levels - 1) + '{"a":1}' + "}".repeat(levels - 1);

describe("deeply nested JSON", () => {
  test("metadata nested 1,500 deep is a 400 naming the field and the limit, and the service keeps answering", async () => {
    const before = await rowCounts(f.database);
    const text = `{"metadata":${nestedObject(1500)}}`;
    expect(text.length).toBeGreaterThan(9000);
    const error = expectError(await postJson("/conversations", text), 400, "invalid_request");
    expect(error.details).toMatchObject({ field: "body.metadata", limit: 64 });
    expect(error.message).toMatch(/^body\.metadata: .*64 levels/);

    expect((await inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    expect(await rowCounts(f.database)).toEqual(before);
    expect(
      (await inject({ method: "POST", url: "/conversations", payload: { metadata: { ok: true } } })).statusCode,
    ).toBe(201);
  });

  test.each([
    ["metadata", `{"metadata":${nestedObject(4000)}}`, "body.metadata"],
    ["an array body", "[".repeat(4000) + "]".repeat(4000), "body"],
    ["content", `{"content":${"[".repeat(4000)}${"]".repeat(4000)}}`, "body.content"],
  ])("%s nested 4,000 deep is a 400, not a stack overflow", async (_what, text, field) => {
    const url = text.includes("content")
      ? `/conversations/${(await inject({ method: "POST", url: "/conversations" })).json().id}/messages`
      : "/conversations";
    const before = await rowCounts(f.database);
    const error = expectError(await postJson(url, text), 400, "invalid_request");
    expect(error.details.field).toBe(field);
    expect(await rowCounts(f.database)).toEqual(before);
  });

  test("metadata may nest 32 levels; 33 is a 400 naming the field and the limit", async () => {
    expect((await postJson("/conversations", `{"metadata":${nestedObject(32)}}`)).statusCode).toBe(201);
    const before = await rowCounts(f.database);
    const error = expectError(
      await postJson("/conversations", `{"metadata":${nestedObject(33)}}`),
      400,
      "invalid_request",
    );
    expect(error.details).toMatchObject({ field: "body.metadata", limit: 32 });
    expect(error.message).toMatch(/^body\.metadata: .*32 levels/);
    expect(await rowCounts(f.database)).toEqual(before);
  });

  test("metadata over 16 KiB is a 400 naming the limit, on create and on update", async () => {
    const big = { notes: "x".repeat(16_384) };
    const before = await rowCounts(f.database);
    const error = expectError(
      await inject({ method: "POST", url: "/conversations", payload: { metadata: big } }),
      400,
      "invalid_request",
    );
    expect(error.details).toMatchObject({ field: "body.metadata", limit: 16_384 });
    expect(error.message).toMatch(/16384 bytes/);
    expect(await rowCounts(f.database)).toEqual(before);

    const conv = (await inject({ method: "POST", url: "/conversations", payload: { metadata: { v: 1 } } })).json();
    expectError(
      await inject({ method: "PATCH", url: `/conversations/${conv.id}`, payload: { metadata: big } }),
      400,
      "invalid_request",
    );
    expect((await inject({ method: "GET", url: `/conversations/${conv.id}` })).json().metadata).toEqual({ v: 1 });
  });
});

describe("input that Postgres cannot take", () => {
  const nul = "%00";
  test.each([
    ["GET", `/conversations/${nul}`, "params.id"],
    ["PATCH", `/conversations/a${nul}b`, "params.id"],
    ["DELETE", `/conversations/${nul}`, "params.id"],
    ["GET", `/conversations/${nul}/messages`, "params.id"],
    ["POST", `/conversations/${nul}/messages`, "params.id"],
    ["GET", `/conversations/${nul}/runs`, "params.id"],
    ["GET", `/conversations/conv_x/runs/${nul}`, "params.run_id"],
    ["POST", `/conversations/conv_x/runs/run${nul}/cancel`, "params.run_id"],
    ["GET", `/conversations/conv_x/runs/${nul}/events`, "params.run_id"],
  ])("a NUL in the path: %s %s is a 400 naming %s", async (method, url, field) => {
    const payload = method === "POST" ? { content: "hi" } : method === "PATCH" ? { title: "t" } : undefined;
    const error = expectError(
      await inject({ method: method as InjectOptions["method"], url, ...(payload && { payload }) }),
      400,
      "invalid_request",
    );
    expect(error.details.field).toBe(field);
    expect(error.message).toMatch(/NUL/);
  });

  test("a cursor that decodes to an id with a NUL is a 400, for conversations and runs", async () => {
    const cursor = Buffer.from("2025-01-01T00:00:00.000Z|conv_\u0000x").toString("base64url");
    const conv = (await inject({ method: "POST", url: "/conversations" })).json();
    expectError(await inject({ method: "GET", url: `/conversations?cursor=${cursor}` }), 400, "invalid_request");
    expectError(
      await inject({ method: "GET", url: `/conversations/${conv.id}/runs?cursor=${cursor}` }),
      400,
      "invalid_request",
    );
  });
});

test("a DELETE racing a new message is never a 500: the message is saved before the delete, or answered 404 (50 tries)", async () => {
  const statuses = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const conv = (await inject({ method: "POST", url: "/conversations" })).json();
    // The DELETE starts a varying number of turns of the event loop later, to meet the POST at each of its steps.
    const [sent, deleted] = await Promise.all([
      inject({ method: "POST", url: `/conversations/${conv.id}/messages`, payload: { content: "What is 2+2?" } }),
      ticks(i % 10).then(() => inject({ method: "DELETE", url: `/conversations/${conv.id}` })),
    ]);
    statuses.add(`${deleted.statusCode}/${sent.statusCode}`);
    expect(deleted.statusCode).toBe(204);
    if (sent.statusCode !== 200) expectError(sent, 404, "not_found");
    expect((await inject({ method: "GET", url: `/conversations/${conv.id}` })).statusCode).toBe(404);
  }
  expect([...statuses].every((s) => ["204/200", "204/404"].includes(s))).toBe(true);
});
