import type { InjectOptions } from "fastify";
import { describe, expect, test } from "vitest";
import { expectError } from "../support/helpers/expect-error.js";
import { rowCounts } from "../support/helpers/row-counts.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const f = useLoopd({ env: { BODY_LIMIT_BYTES: "4096" } });
const inject = (opts: InjectOptions) => f.loopd.app.inject(opts);
const newConversation = async () => (await inject({ method: "POST", url: "/conversations" })).json();

/** Sends `opts` and checks that the answer is the error `status`/`code` and that nothing was saved. */
async function refused(opts: InjectOptions, status: number, code: string) {
  const before = await rowCounts(f.database);
  const error = expectError(await inject(opts), status, code);
  expect(await rowCounts(f.database)).toEqual(before);
  return error;
}

describe("bodies that are not JSON", () => {
  test.each([
    ["form-encoded", "application/x-www-form-urlencoded", "content=hi"],
    ["plain text", "text/plain", '{"content":"hi"}'],
    ["multipart", "multipart/form-data; boundary=x", "--x--"],
    ["XML", "application/xml", "<content>hi</content>"],
  ])("a %s body is 415 unsupported_media_type and saves nothing", async (_what, contentType, payload) => {
    const conv = await newConversation();
    for (const url of ["/conversations", `/conversations/${conv.id}/messages`]) {
      const error = await refused(
        { method: "POST", url, headers: { "content-type": contentType }, payload },
        415,
        "unsupported_media_type",
      );
      expect(error.message).toMatch(/application\/json/);
      expect(error.details.content_type).toBe(contentType);
    }
  });

  test("a body without a Content-Type is 415 too", async () => {
    await refused(
      { method: "POST", url: "/conversations", headers: { "content-type": "" }, payload: '{"title":"x"}' },
      415,
      "unsupported_media_type",
    );
  });

  test("an empty JSON body is no body: a conversation with the defaults", async () => {
    const res = await inject({
      method: "POST",
      url: "/conversations",
      headers: { "content-type": "application/json" },
      payload: "",
    });
    expect(res.statusCode).toBe(201);
  });

  test("the 413 message names the limit in bytes", async () => {
    const error = await refused(
      { method: "POST", url: "/conversations", payload: { system: "x".repeat(5_000) } },
      413,
      "payload_too_large",
    );
    expect(error.message).toMatch(/4096 bytes/);
    expect(error.details.limit).toBe(4096);
  });
});

test.each([101, 2_500, 10_000])("an id of %i characters is a 400 naming params.id and its limit", async (length) => {
  const error = expectError(
    await inject({ method: "GET", url: `/conversations/${"x".repeat(length)}/runs` }),
    400,
    "invalid_request",
  );
  expect(error).toMatchObject({
    message: "params.id: must be at most 100 characters",
    details: { field: "params.id" },
  });
});

describe("a wrong method on a route that exists", () => {
  test.each([
    ["PUT", "/conversations", "POST, GET, HEAD"],
    ["DELETE", "/conversations", "POST, GET, HEAD"],
    ["POST", "/conversations/conv_x", "GET, HEAD, PATCH, DELETE"],
    ["PUT", "/conversations/conv_x/messages", "GET, HEAD, POST"],
    ["GET", "/conversations/conv_x/runs/run_x/cancel", "POST"],
    ["OPTIONS", "/healthz", "GET, HEAD"],
  ])("%s %s is 405 method_not_allowed with Allow: %s", async (method, url, allow) => {
    const res = await inject({ method: method as InjectOptions["method"], url });
    const error = expectError(res, 405, "method_not_allowed");
    expect(res.headers.allow).toBe(allow);
    expect(error.details.allowed).toEqual(allow.split(", "));
    expect(error.message).toContain(method);
  });

  test("the method is judged before the body: whatever it holds, a wrong method is 405 and a wrong path 404", async () => {
    for (const [headers, payload] of [
      [{ "content-type": "text/plain" }, "hello"],
      [{ "content-type": "application/json" }, "{not json"],
      [{ "content-type": "application/json" }, JSON.stringify({ system: "x".repeat(5_000) })],
    ] as const) {
      expectError(await inject({ method: "PUT", url: "/conversations", headers, payload }), 405, "method_not_allowed");
      expectError(await inject({ method: "POST", url: "/nowhere", headers, payload }), 404, "not_found");
    }
  });

  test("a path no route has is still 404", async () => {
    expectError(await inject({ method: "PUT", url: "/conversations/conv_x/nothing" }), 404, "not_found");
    expectError(await inject({ method: "GET", url: "/conversations/conv_x/runs/run_x/cancel/more" }), 404, "not_found");
  });
});

describe("unknown body fields", () => {
  test.each([
    ["POST", "/conversations", { titel: "typo" }, ["body.titel"]],
    ["POST", "/conversations", { title: "ok", metdata: {}, extra: 1 }, ["body.metdata", "body.extra"]],
    ["POST", "messages", { content: "hi", max_step: 3 }, ["body.max_step"]],
    ["POST", "messages", { content: [{ type: "text", text: "hi", cache: true }] }, ["body.content[0].cache"]],
    [
      "POST",
      "messages",
      { content: "hi", tool_choice: { name: "calculate", strict: true } },
      ["body.tool_choice.strict"],
    ],
    ["PATCH", "conversation", { modle: "gpt-4o" }, ["body.modle"]],
  ])("%s %s with %j is a 400 naming %j, and changes nothing", async (method, target, payload, unknown) => {
    const conv = await newConversation();
    const url =
      target === "messages"
        ? `/conversations/${conv.id}/messages`
        : target === "conversation"
          ? `/conversations/${conv.id}`
          : target;
    const error = await refused({ method: method as InjectOptions["method"], url, payload }, 400, "invalid_request");
    expect(error.details.field).toBe(unknown[0]);
    expect(error.details.unknown).toEqual(unknown);
    expect(error.message).toBe(`${unknown[0]}: is not a field this request takes (check its spelling)`);
    expect((await inject({ method: "GET", url: `/conversations/${conv.id}` })).json()).toMatchObject({
      model: "loopd-mock",
      message_count: 0,
    });
  });
});

describe("messages say what is expected", () => {
  test.each([
    [{ content: 5 }, "body.content", /^body\.content: must be a non-empty string or an array of blocks/],
    // An array of blocks with a bad one: the block is named.
    [
      { content: [{ type: "image", url: "x" }] },
      "body.content[0].source",
      /^body\.content\[0\]\.source: Invalid input: expected object, received undefined/,
    ],
    [{}, "body.content", /^body\.content: is required: a non-empty string or an array of blocks/],
    [
      { content: "hi", tool_choice: "sometimes" },
      "body.tool_choice",
      /must be "auto", "none", "required" or \{"name": "<tool>"\}/,
    ],
    [{ content: "hi", max_steps: "3" }, "body.max_steps", /expected number, received string/],
  ])("%j: %s %s", async (payload, field, message) => {
    const conv = await newConversation();
    const error = await refused(
      { method: "POST", url: `/conversations/${conv.id}/messages`, payload },
      400,
      "invalid_request",
    );
    expect(error.details.field).toBe(field);
    expect(error.message).toMatch(message);
    expect(error.message).not.toMatch(/Invalid input$/);
  });
});

test.each([[[]], ["x"], [1]])("metadata %j is a 400 saying it must be a JSON object", async (metadata) => {
  const error = await refused({ method: "POST", url: "/conversations", payload: { metadata } }, 400, "invalid_request");
  expect(error.message).toBe("body.metadata: must be a JSON object");
});

test("/openapi.json lists every error code, the new ones included", async () => {
  const doc = (await inject({ method: "GET", url: "/openapi.json" })).json();
  const responses = doc.paths["/conversations/{id}/messages"].post.responses;
  expect(Object.keys(responses)).toEqual(expect.arrayContaining(["400", "404", "409", "413", "415", "503"]));
  const codes = JSON.stringify(responses["415"]);
  for (const code of ["method_not_allowed", "unsupported_media_type", "payload_too_large", "unavailable"])
    expect(codes).toContain(code);
});
