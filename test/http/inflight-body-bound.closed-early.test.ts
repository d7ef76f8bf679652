/**
 * A request whose connection closed while an earlier hook (the key check,
 * which asks the database) still ran reaches the body bound already closed:
 * its bytes must not be held for good. Under load the key check is slow and
 * a REQUEST_TIMEOUT_MS answer can close the connection first (seen in CI:
 * 111 bytes held after a trickled body's 408).
 */
import { once } from "node:events";
import { connect } from "node:net";
import Fastify from "fastify";
import { afterAll, expect, test } from "vitest";
import { useInflightBodyBound } from "../../src/http/plugins/inflight-body-bound.js";

const app = Fastify();
let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));
let seen!: (raw: NodeJS.ReadableStream) => void;
const arrived = new Promise<NodeJS.ReadableStream>((resolve) => (seen = resolve));
let bounded!: () => void;
const pastBound = new Promise<void>((resolve) => (bounded = resolve));
// Stands for the key check: the request waits here while its connection closes.
app.addHook("onRequest", async (req) => {
  seen(req.raw);
  await gate;
});
useInflightBodyBound(app, { total: 1024 * 1024, perKey: 1024 * 1024 });
app.addHook("preParsing", async (_req, _reply, payload) => {
  bounded();
  return payload;
});
app.post("/", async () => ({ ok: true }));
afterAll(() => app.close());

test("a request closed before the body bound's hook runs holds no bytes after it", async () => {
  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  const socket = connect(Number(new URL(address).port), "127.0.0.1");
  await once(socket, "connect");
  socket.write("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 111\r\n\r\n{");
  const raw = await arrived;
  socket.destroy();
  await new Promise((resolve) => raw.once("close", resolve));
  openGate();
  await pastBound;
  expect(app.inflightBodies.total).toBe(0);
});
