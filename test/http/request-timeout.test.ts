import { connect } from "node:net";
import { expect, test } from "vitest";
import { rowCounts } from "../support/helpers/row-counts.js";
import { startUpload } from "../support/helpers/slow-upload.js";
import { useLoopd } from "../support/helpers/use-loopd.js";

const TIMEOUT_MS = 800;
const f = useLoopd({ listen: true, env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } });

/** The request a test sends: a conversation whose creation would show if the handler ran. */
const BODY = JSON.stringify({ title: "never created", metadata: { pad: "x".repeat(64) } });

async function expectTimedOut(upload: ReturnType<typeof startUpload>, startedAt: number) {
  const { status, body, text } = await upload.closed;
  const elapsed = performance.now() - startedAt;
  expect(status, text).toBe(408);
  expect(JSON.parse(body)).toEqual({
    error: { code: "request_timeout", message: expect.any(String), details: expect.any(Object) },
  });
  expect(text).toMatch(/\r\nConnection: close\r\n/i);
  // Within the timeout and one check of the connections (a quarter of it), with room for a busy machine.
  expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(elapsed).toBeLessThan(TIMEOUT_MS * 1.25 + 1_000);
  return elapsed;
}

test("a body trickled in a byte at a time gets 408 and a closed connection within REQUEST_TIMEOUT_MS; the handler never runs", async () => {
  const before = await rowCounts(f.database);
  const startedAt = performance.now();
  const upload = startUpload(f.loopd.url, {
    path: "/conversations",
    headers: { "Content-Length": Buffer.byteLength(BODY) },
  });
  // A byte every 50 ms: always something arriving, never the whole body in time.
  let sent = 0;
  const trickle = setInterval(() => {
    if (!upload.socket.writable || sent >= BODY.length - 1) return;
    upload.socket.write(BODY[sent++]!);
  }, 50);
  try {
    const elapsed = await expectTimedOut(upload, startedAt);
    console.info(
      `trickled body: 408 after ${elapsed.toFixed(0)} ms (REQUEST_TIMEOUT_MS ${TIMEOUT_MS}), ${sent} bytes sent`,
    );
  } finally {
    clearInterval(trickle);
  }
  expect(sent).toBeGreaterThan(5);
  expect(await rowCounts(f.database)).toEqual(before);
  expect(f.loopd.app.inflightBodies.total).toBe(0);
});

test("a client that stalls halfway through its body gets 408 and a closed connection; its bytes are released", async () => {
  const before = await rowCounts(f.database);
  const startedAt = performance.now();
  const upload = startUpload(f.loopd.url, {
    path: "/conversations",
    headers: { "Content-Length": Buffer.byteLength(BODY) },
  });
  upload.socket.write(BODY.slice(0, BODY.length / 2));
  await expectTimedOut(upload, startedAt);
  expect(await rowCounts(f.database)).toEqual(before);
  expect(f.loopd.app.inflightBodies.total).toBe(0);
  // The server goes on: a whole request in time is answered.
  const res = await fetch(`${f.loopd.url}/conversations`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title: "in time" }),
  });
  expect(res.status).toBe(201);
});

test("headers that never end get 408 too", async () => {
  const startedAt = performance.now();
  const { port } = new URL(f.loopd.url);
  const socket = connect(Number(port), "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  socket.write("POST /conversations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl");
  await new Promise((resolve) => socket.on("close", resolve));
  expect(Buffer.concat(chunks).toString("utf8")).toMatch(/^HTTP\/1\.1 408 /);
  expect(performance.now() - startedAt).toBeLessThan(TIMEOUT_MS * 1.25 + 1_000);
});
