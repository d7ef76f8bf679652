/** What every answer carries: its request id (the client's own when sensible), CORS only for CORS_ORIGINS, security headers on /docs. */
import { expect, test } from "vitest";
import { captureLogs } from "../support/helpers/log-sink.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const logs = captureLogs("info");
const f = useLoopd({ env: { CORS_ORIGINS: "https://app.example.com" }, logger: logs.logger });
const inject = (url: string, headers: Record<string, string> = {}, method: "GET" | "OPTIONS" | "POST" = "GET") =>
  f.loopd.app.inject({ method, url, headers });

test("x-request-id: the client's own when it is at most 128 of [A-Za-z0-9._:-], else a new one; on errors too, and in the request's log lines", async () => {
  expect((await inject("/healthz", { "x-request-id": "req-42.a:b_c" })).headers["x-request-id"]).toBe("req-42.a:b_c");
  for (const bad of ["has space", "x".repeat(129), "semi;colon"]) {
    const id = (await inject("/healthz", { "x-request-id": bad })).headers["x-request-id"];
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
  }
  const missing = await inject("/conversations/conv_nope", { "x-request-id": "trace-me-404" });
  expect(missing.statusCode).toBe(404);
  expect(missing.headers["x-request-id"]).toBe("trace-me-404");
  expect(logs.lines.filter((l) => l.reqId === "trace-me-404").length).toBeGreaterThanOrEqual(2);
});

test("CORS: only the configured origin is allowed; a preflight needs no key", async () => {
  const allowed = await inject(
    "/conversations",
    { origin: "https://app.example.com", "access-control-request-method": "POST" },
    "OPTIONS",
  );
  expect(allowed.statusCode).toBe(204);
  expect(allowed.headers["access-control-allow-origin"]).toBe("https://app.example.com");
  const other = await inject("/conversations", { origin: "https://evil.example.com" });
  expect(other.headers["access-control-allow-origin"]).toBeUndefined();
});

test("/docs has security headers and a content security policy", async () => {
  const docs = await inject("/docs/");
  expect(docs.statusCode).toBe(200);
  expect(docs.headers["x-content-type-options"]).toBe("nosniff");
  expect(docs.headers["x-frame-options"]).toBeDefined();
  expect(docs.headers["content-security-policy"]).toMatch(/default-src 'self'/);
});
