import { connect } from "node:net";
import { describe, expect, test } from "vitest";
import { expectError } from "../support/helpers/expect-error.js";
import { captureLogs } from "../support/helpers/log-sink.js";
import { rawRequest } from "../support/helpers/raw-http.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const logs = captureLogs();
const f = useLoopd({ listen: true, logger: logs.logger });

/** Opens a socket to loopd and writes `bytes`; resolves once connected. */
async function rawSocket() {
  const { port } = new URL(f.loopd.url);
  const socket = connect(Number(port), "127.0.0.1");
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  return socket;
}

const until = async (check: () => boolean, ms = 5_000) => {
  for (const end = Date.now() + ms; !check();) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
};

test("a client hanging up mid-upload is the client's doing: logged below warn, never as a database outage", async () => {
  logs.lines.length = 0;
  const socket = await rawSocket();
  socket.write(
    'POST /conversations HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":"',
  );
  await new Promise((r) => setTimeout(r, 100));
  socket.destroy();
  await until(() => logs.lines.some((l) => /client closed the connection/.test(l.msg)));
  expect(logs.lines.filter((l) => l.level >= 40)).toEqual([]);
  expect(logs.lines.find((l) => /client closed the connection/.test(l.msg))).toMatchObject({
    level: 30,
    err: { code: "ECONNRESET" },
  });
  expect(JSON.stringify(logs.lines)).not.toMatch(/unavailable|unreachable/);
});

describe("requests refused before routing get the contract's error body", () => {
  const get = (target: string, extra = "") =>
    rawRequest(f.loopd.url, `GET ${target} HTTP/1.1\r\nHost: localhost\r\n${extra}\r\n`);

  test("headers over Node's limit are a 431 headers_too_large naming the limit", async () => {
    const res = await get("/healthz", `X-Big: ${"a".repeat(20_000)}\r\n`);
    const error = expectError(res, 431, "headers_too_large");
    expect(error.message).toMatch(/16384 bytes/);
  });

  test("a URL longer than the header limit is a 431 too", async () => {
    expectError(await get(`/conversations/${"a".repeat(20_000)}`), 431, "headers_too_large");
  });

  test.each([
    ["a request line that is not HTTP", "GARBAGE\r\n\r\n"],
    ["a control character in the URL", "GET /conversations/\x01 HTTP/1.1\r\nHost: localhost\r\n\r\n"],
    ["a header name with a space", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nBad Header: 1\r\n\r\n"],
    ["a negative Content-Length", "POST /conversations HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n"],
  ])("%s is a 400 invalid_request", async (_what, request) => {
    expectError(await rawRequest(f.loopd.url, request), 400, "invalid_request");
  });

  test.each([
    ["/conversations/%zz", "bad_url"],
    ["/conversations/%ED%A0%80/runs", "bad_url"],
    ["/%", "bad_url"],
  ])("bad percent-encoding, %s, is a 400 invalid_request", async (target, reason) => {
    const error = expectError(await get(target), 400, "invalid_request");
    expect(error.details.reason).toBe(reason);
  });

  test("an id of 101 characters is a 400 naming params.id, not the router's 414", async () => {
    const error = expectError(await get(`/conversations/${"a".repeat(101)}`), 400, "invalid_request");
    expect(error.details.field).toBe("params.id");
    expect(error.message).toMatch(/at most 100 characters/);
  });
});

// Last in this file: it stops the server.
test("a request that arrives while the server stops is a 503 unavailable with Retry-After, in the contract's shape", async () => {
  const conv = (
    await f.loopd.app.inject({ method: "POST", url: "/conversations", payload: { provider: "anthropic" } })
  ).json();
  f.llm.script({ text: "slow answer", chunkDelayMs: 150 });
  // A busy keep-alive connection outlives the listening socket: a request sent on it after the stop began still reaches loopd.
  const socket = await rawSocket();
  let received = "";
  socket.on("data", (chunk) => (received += chunk));
  const ended = new Promise((resolve) => socket.once("close", resolve));
  const body = JSON.stringify({ content: "take your time" });
  socket.write(
    `POST /conversations/${conv.id}/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  await until(() => f.llm.requests.length > 0);
  const stopped = f.loopd.close();
  // Not a probe: /healthz and /readyz answer for themselves while the server stops.
  socket.write(`GET /conversations/${conv.id} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  await ended;
  await stopped;
  const [first, second] = received.split(/(?=HTTP\/1\.1 \d{3} )/);
  expect(first).toMatch(/^HTTP\/1\.1 200 /);
  const [head, json] = second!.split("\r\n\r\n");
  expect(head).toMatch(/^HTTP\/1\.1 503 /);
  expect(head).toMatch(/\r\nretry-after: 5\r\n/i);
  expect(JSON.parse(json!)).toEqual({
    error: { code: "unavailable", message: expect.stringMatching(/shutting down/), details: {} },
  });
});
